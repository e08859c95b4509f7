import { ApiError } from '../../shared/errors.js';
import { formatUsd, isWholeCents, parseUsd } from '../../shared/money.js';
import type { Db } from '../db/client.js';
import { refuseUnclaimedUnderRequired } from './email-policy.js';
import { heldBy } from './holders.js';

/** What a payment at `POST /extend` buys: a new account, a renewal of one, or credit added to one. */
export type PurchaseKind = 'purchase' | 'renewal' | 'topup';

export type PurchasePlan = {
  id: string;
  slug: string;
  name: string;
  kind: string;
  billingMode: string;
  interval: string;
  serviceId: string;
  serviceSlug: string;
  basePriceMicros: bigint;
  includedCreditMicros: bigint;
  minimumPurchaseMicros: bigint;
  verifiedEmailPolicy: string;
  maxClaims: number | null;
};

export type PurchaseTerms = {
  kind: PurchaseKind;
  plan: PurchasePlan;
  /** The account renewed or topped up; null for a new one. */
  accessId: string | null;
  /** What the payment is for; 0 for free trials and $0 plans, which open without one. */
  priceMicros: bigint;
  /** Credit bought on top of the plan's included credit (credit plans). */
  creditMicros: bigint;
};

/** The parts of `POST /extend` the terms are decided from. */
export type PurchaseAsk = {
  sellerId: string;
  agentId: string;
  planId?: string | undefined;
  amountUsd?: string | undefined;
  accessId?: string | undefined;
};

/**
 * What a purchase at the pay URL is refused for before any payment is asked, in the order an
 * agent can act on: a storefront that sells nothing (sales off, or no plan but pay-as-you-go) is
 * 501 `entitlements_not_available`; then the account named by `?accessId=` (404
 * `access_not_found` unless the agent or its owner holds it), then the plan (404
 * `plan_not_found`, 400 `payg_not_purchasable`), then the amount a credit plan needs
 * (`amount_required`, `amount_not_cent_increment`, `amount_below_minimum` with the minimum), then
 * an agent no verified human has claimed, on a paid plan whose `verifiedEmailPolicy` is `required`
 * (401 `bearer_required`; email-policy.ts).
 * Returns the terms of a purchase that passes.
 */
export async function purchaseTerms(db: Db, ask: PurchaseAsk): Promise<PurchaseTerms> {
  const seller = await db.seller.findUniqueOrThrow({
    where: { id: ask.sellerId },
    select: { salesEnabled: true, services: { select: { plans: { select: { id: true, billingMode: true } } } } },
  });
  const plans = seller.services.flatMap((service) => service.plans);
  if (!seller.salesEnabled) throw new ApiError('entitlements_not_available', 'This seller does not sell plans at its pay URL.');
  if (!plans.some((plan) => plan.billingMode !== 'payg')) {
    throw new ApiError('entitlements_not_available', 'This seller sells no plans; its calls are paid one by one.');
  }

  // A suspended account (a payment for it failed, or the seller never took it) is renewed or
  // topped up like any other: paying resumes it (account-changes.ts › extendAccount).
  const access = ask.accessId === undefined ? null : await heldAccess(db, ask.sellerId, ask.agentId, ask.accessId);
  const planId = ask.planId ?? access?.planId;
  if (planId === undefined) throw new ApiError('invalid_request', 'planId is required (or name an account with ?accessId=).');
  if (access && planId !== access.planId) {
    throw new ApiError('invalid_request', 'planId differs from the account’s plan: buy the other plan as a new purchase.');
  }
  const plan = plans.some((p) => p.id === planId) ? await loadPlan(db, planId) : null;
  if (!plan) throw new ApiError('plan_not_found', 'This seller has no plan with that id: see /manifest.json.');
  if (plan.billingMode === 'payg') throw new ApiError('payg_not_purchasable');
  if (access && plan.kind === 'free_trial') throw new ApiError('invalid_request', 'A free trial is not renewed: buy a plan.');

  const kind: PurchaseKind = !access ? 'purchase' : plan.billingMode === 'credit' ? 'topup' : 'renewal';
  let creditMicros = 0n;
  if (plan.billingMode === 'credit' && plan.kind !== 'free_trial') {
    if (ask.amountUsd === undefined) throw new ApiError('amount_required');
    const amount = parseUsd(ask.amountUsd);
    if (!amount.ok) throw new ApiError('invalid_request', `amountUsd ${amount.reason}`);
    if (!isWholeCents(amount.micros)) throw new ApiError('amount_not_cent_increment');
    if (amount.micros < plan.minimumPurchaseMicros) {
      throw new ApiError('amount_below_minimum', undefined, { minimumPurchaseUsd: formatUsd(plan.minimumPurchaseMicros) });
    }
    creditMicros = amount.micros;
  } else if (ask.amountUsd !== undefined) {
    throw new ApiError('invalid_request', 'amountUsd is for credit plans only: this plan has a fixed price.');
  }
  // A top-up buys credit only; a purchase or renewal pays the plan's price for the period too.
  const priceMicros = plan.kind === 'free_trial' ? 0n : (kind === 'topup' ? 0n : plan.basePriceMicros) + creditMicros;
  // A free plan's policy is read with the claim it takes turns with (free-plans.ts › freeTaker).
  if (priceMicros > 0n && plan.verifiedEmailPolicy === 'required') {
    const agent = await db.agent.findUniqueOrThrow({
      where: { id: ask.agentId },
      select: { buyerId: true, claimedAt: true, buyer: { select: { emailVerifiedAt: true } } },
    });
    refuseUnclaimedUnderRequired(plan.verifiedEmailPolicy, agent, 'This plan');
  }
  return { kind, plan, accessId: access?.id ?? null, priceMicros, creditMicros };
}

/** The account `?accessId=` names, if the agent or the human who owns it holds it with this seller. */
async function heldAccess(db: Db, sellerId: string, agentId: string, accessId: string) {
  const agent = await db.agent.findUniqueOrThrow({ where: { id: agentId }, select: { buyerId: true } });
  const access = await db.access.findFirst({
    where: { id: accessId, sellerId, ...heldBy(agentId, agent.buyerId) },
    select: { id: true, planId: true, status: true },
  });
  if (!access) throw new ApiError('access_not_found', 'You hold no account with that id here: see /purchases/receipt.');
  return access;
}

export async function loadPlan(db: Pick<Db, 'plan'>, planId: string): Promise<PurchasePlan> {
  const plan = await db.plan.findUniqueOrThrow({ where: { id: planId }, include: { service: { select: { slug: true } } } });
  return {
    id: plan.id,
    slug: plan.slug,
    name: plan.name,
    kind: plan.kind,
    billingMode: plan.billingMode,
    interval: plan.interval,
    serviceId: plan.serviceId,
    serviceSlug: plan.service.slug,
    basePriceMicros: plan.basePriceMicros,
    includedCreditMicros: plan.includedCreditMicros,
    minimumPurchaseMicros: plan.minimumPurchaseMicros,
    verifiedEmailPolicy: plan.verifiedEmailPolicy,
    maxClaims: plan.maxClaims,
  };
}
