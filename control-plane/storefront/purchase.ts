import type { CardPaymentsConfig } from '../../shared/config.js';
import type { AccountView, ClaimInput, PurchaseOutcome, PurchasePayment } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { formatUsd } from '../../shared/money.js';
import { cardOffer } from '../card-payments/card-offer.js';
import type { Db } from '../db/client.js';
import { runEach, sqlOf } from '../db/sql.js';
import { PURCHASE_KINDS } from '../payments/attempt-claim.js';
import { moveAttempt } from '../payments/attempt-status.js';
import { newAttempt } from '../payments/challenge.js';
import { claimPaidRequest } from '../payments/claim.js';
import { creditBalance } from '../payments/credit.js';
import { type PaymentRails, railOf } from '../payments/rails.js';
import { billingSummary } from '../payments/settlement/billing.js';
import { holdInTime } from '../payments/settlement/hold.js';
import { settleInTime } from '../payments/settlement/record.js';
import { applyPurchase } from './account-changes.js';
import { accountViews } from './account-view.js';
import { freeTaker, takeFreePlan } from './free-plans.js';
import { heldBy } from './holders.js';
import { loadPlan, type PurchaseAsk, type PurchaseKind, type PurchaseTerms, purchaseTerms } from './purchase-terms.js';

/**
 * A purchase at the pay URL (`POST /extend`), from the ask to the account:
 *
 * 1. `startPurchase` makes every refusal (purchase-terms.ts), then opens a free plan at once, or
 *    records a payment attempt for the price and answers the challenge.
 * 2. `completePurchase` takes the paid retry: the claim admits it once (byte-identical, verified,
 *    not replayed), then a stateful seller's purchase is reserved and the account opened, or any
 *    other seller's is settled and then the account opened. A settlement whose outcome is not
 *    known yet opens the account when it settles (`finishPurchases`).
 *
 * The account is opened or extended in the same transaction that records which account the
 * payment bought, guarded on it not having one yet: one payment, one change, whoever gets there.
 */

type StartPurchase = PurchaseAsk & { method: string; pathAndQuery: string; bodyDigest: string };

/** What a paid attempt buys, kept on the attempt until the payment arrives. */
type Bought = { kind: PurchaseKind; planId: string; creditMicros: string; accessId: string | null };

export async function startPurchase(
  db: Db,
  rails: PaymentRails,
  input: StartPurchase,
  cards?: CardPaymentsConfig,
): Promise<PurchaseOutcome> {
  const terms = await purchaseTerms(db, input);
  if (terms.priceMicros === 0n) return openFree(db, input, terms);
  // Read once: whether the seller holds accounts, and what the attempt needs of it.
  const seller = await db.seller.findUniqueOrThrow({
    where: { id: input.sellerId },
    select: { stateful: true, organizationId: true, payToAddress: true, sandbox: true, cardAccountId: true, cardChargesEnabled: true },
  });

  const bought: Bought = { kind: terms.kind, planId: terms.plan.id, creditMicros: terms.creditMicros.toString(), accessId: terms.accessId };
  const requestId = newId('request');
  const attempt = await newAttempt(
    db,
    rails,
    {
      sellerId: input.sellerId,
      serviceId: terms.plan.serviceId,
      planId: terms.plan.id,
      requestId,
      agentId: input.agentId,
      kind: terms.kind,
      method: input.method,
      pathAndQuery: input.pathAndQuery,
      bodyDigest: input.bodyDigest,
      usageJson: '[]',
      amountMicros: terms.priceMicros,
      purchaseJson: JSON.stringify(bought),
      // A stateful seller takes the account after the payment: held in the escrow until it has.
      held: seller.stateful,
    },
    seller,
  );
  await sqlOf(db).transaction((tx) => runEach(tx, attempt.statements()));
  const plan = { id: terms.plan.id, slug: terms.plan.slug, billingMode: terms.plan.billingMode };
  const challenge = attempt.challenge({ serviceSlug: terms.plan.serviceSlug, usage: [], plan });
  const card = cardOffer(cards, seller, terms.priceMicros);
  return { kind: 'challenge', requestId, challenge: card ? { ...challenge, card } : challenge };
}

async function openFree(db: Db, input: StartPurchase, terms: PurchaseTerms): Promise<PurchaseOutcome> {
  const accessId = terms.accessId ?? newId('access');
  const now = new Date();
  await db.$transaction(async (tx) => {
    const takerId = await freeTaker(tx, input.agentId, terms);
    if (terms.kind === 'purchase') await takeFreePlan(tx, terms, takerId, accessId);
    await applyPurchase(tx, { accessId, sellerId: input.sellerId, agentId: input.agentId, terms, now });
  }, TRANSACTION_LIMITS);
  return { kind: 'opened', account: await accountView(db, input.sellerId, accessId), payment: null, settled: null };
}

export async function completePurchase(
  db: Db,
  rails: PaymentRails,
  input: ClaimInput & { amountUsd?: string | undefined },
): Promise<PurchaseOutcome> {
  const found = await db.paymentAttempt.findUnique({ where: { id: input.paymentId }, select: { kind: true } });
  // A per-call payment presented here pays for another request.
  if (found && !PURCHASE_KINDS.has(found.kind)) throw new ApiError('payment_request_mismatch');
  await claimPaidRequest(db, rails, input);
  const attempt = await db.paymentAttempt.findUniqueOrThrow({
    where: { id: input.paymentId },
    include: { seller: { select: { stateful: true } } },
  });
  // Held or settled on the rail it was claimed on: the one it was made on.
  const rail = railOf(rails, attempt);

  // Challenged to the escrow at a stateful seller: held there until the seller has the account
  // (settlement/hold.ts). A seller that became stateful after the challenge is paid at once, as any
  // other; one that stopped being stateful is paid through the escrow at once, whole.
  if (attempt.payoutTo && attempt.seller.stateful) {
    if (!(await moveAttempt(db, attempt.id, { to: 'holding', from: ['in_flight'] }))) throw new ApiError('payment_request_in_flight');
    const result = await holdInTime(db, rail, attempt).catch(() => undefined);
    if (result?.status === 'failed') throw new ApiError('payment_required', 'settlement_failed', { settlementReason: result.reason });
    const holdTxHash = result?.transaction ?? null;
    // Opened only once held: a hold not known yet (or recorded by the pending loop meanwhile) is
    // the pending loop's to finish, and the account opens then (`finishPurchases`).
    if (result?.reserved !== true) return { kind: 'settling', payment: paymentView({ ...attempt, status: 'holding', holdTxHash }) };
    const accessId = await fulfil(db, attempt.id);
    return opened(db, { ...attempt, status: 'reserved', holdTxHash }, accessId, null);
  }

  await moveAttempt(db, attempt.id, { to: 'settling', from: ['in_flight'], set: chargedWhole(attempt.amountMicros) });
  // A chain slower than the proxy waits answers settling; the account opens once it settles (`finishPurchases`).
  // One that throws is left `settling` too: the pending loop settles it again.
  const result = await settleInTime(db, rail, attempt).catch(() => undefined);
  if (result?.status === 'failed') throw new ApiError('payment_required', 'settlement_failed', { settlementReason: result.reason });
  const transaction = result?.transaction ?? null;
  if (result?.status !== 'settled') {
    return { kind: 'settling', payment: paymentView({ ...attempt, status: 'settling', settleTxHash: transaction }) };
  }
  const accessId = await fulfil(db, attempt.id);
  const settled = {
    kind: 'billed' as const,
    adjusted: [],
    billing: billingSummary('settled', attempt.amountMicros, attempt.amountMicros, 'credited', transaction),
    receipt: { success: true, transaction: transaction ?? '', network: result.network, payer: attempt.payer ?? '' },
  };
  return opened(db, { ...attempt, status: 'settled', settleTxHash: transaction }, accessId, settled);
}

/**
 * Finishes purchases their buyer stopped waiting for: one settled or held late (an unknown outcome
 * finished by the settlement loop) gets its account; one left verified but unfinished by a crash
 * (`in_flight` for a minute) is handed to the loop that holds it in the escrow (a held purchase)
 * or to the settlement loop (any other); submitting twice is safe. Safe beside a purchase
 * finishing itself: each step is guarded on the state it leaves.
 */
export async function finishPurchases(db: Db, now = Date.now()): Promise<number> {
  const kinds = { in: [...PURCHASE_KINDS] };
  const stalled = await db.paymentAttempt.findMany({
    // A card payment in flight is the provider's to finish (its retry, or its payment_intent.succeeded event).
    where: {
      kind: kinds,
      status: 'in_flight',
      accessId: null,
      verifiedAt: { lt: new Date(now - STALLED_MS) },
      paymentMethod: { not: 'mpp_card' },
    },
    select: { id: true, amountMicros: true, payoutTo: true, seller: { select: { stateful: true } } },
    take: 100,
  });
  let finished = 0;
  // One that throws (its plan deleted meanwhile, say) does not hold up the rest, nor the loop.
  const each = (step: () => Promise<unknown>) =>
    step().then(
      () => finished++,
      () => {},
    );
  for (const attempt of stalled) {
    await each(() =>
      attempt.payoutTo && attempt.seller.stateful
        ? moveAttempt(db, attempt.id, { to: 'holding', from: ['in_flight'] })
        : moveAttempt(db, attempt.id, { to: 'settling', from: ['in_flight'], set: chargedWhole(attempt.amountMicros) }),
    );
  }
  const paid = await db.paymentAttempt.findMany({
    where: {
      kind: kinds,
      accessId: null,
      OR: [
        { status: 'settled', settledAt: { lt: new Date(now - 10_000) } },
        { status: 'reserved', verifiedAt: { lt: new Date(now - 10_000) } },
      ],
    },
    select: { id: true },
    take: 100,
  });
  for (const { id } of paid) await each(() => fulfil(db, id));
  return finished;
}

/** A purchase charges its whole price: nothing remains, and `credited` is what that is called. */
function chargedWhole(amountMicros: bigint) {
  return { chargedMicros: amountMicros, remainderHandling: 'credited' };
}

/** A paid retry finishes in seconds; one verified this long ago and still in flight was cut off. */
const STALLED_MS = 60_000;

/**
 * Opens or extends the account a paid attempt bought, once: the attempt (and the card payment that
 * paid it, if any) is marked with the account in the same transaction, guarded on it having none.
 * Returns the account either way.
 */
export async function fulfil(db: Db, attemptId: string): Promise<string> {
  return db.$transaction(async (tx) => {
    const attempt = await tx.paymentAttempt.findUniqueOrThrow({ where: { id: attemptId } });
    if (attempt.accessId) return attempt.accessId;
    const bought = JSON.parse(attempt.purchaseJson ?? 'null') as Bought;
    const accessId = bought.accessId ?? newId('access');
    // Paid (or held in the escrow) already: only marked with the account it bought.
    const marked = (await tx.paymentAttempt.updateMany({ where: { id: attemptId, accessId: null }, data: { accessId } })).count;
    if (marked !== 1) return (await tx.paymentAttempt.findUniqueOrThrow({ where: { id: attemptId } })).accessId!;
    const plan = await loadPlan(tx, bought.planId);
    const terms: PurchaseTerms = {
      kind: bought.kind,
      plan,
      accessId: bought.accessId,
      priceMicros: attempt.amountMicros,
      creditMicros: BigInt(bought.creditMicros),
    };
    await applyPurchase(tx, { accessId, sellerId: attempt.sellerId, agentId: attempt.agentId!, terms, now: new Date() });
    await tx.cardPayment.updateMany({ where: { paymentAttemptId: attemptId }, data: { accessId } });
    return accessId;
  }, TRANSACTION_LIMITS);
}

/** Renewals of one account queue behind each other on its row lock. */
const TRANSACTION_LIMITS = { maxWait: 15_000, timeout: 15_000 };

type PaymentFields = {
  id: string;
  amountMicros: bigint;
  status: string;
  settleTxHash: string | null;
  holdTxHash: string | null;
  refundTxHash: string | null;
};

export async function opened(
  db: Db,
  attempt: PaymentFields & { sellerId: string },
  accessId: string,
  settled: Extract<PurchaseOutcome, { kind: 'opened' }>['settled'],
): Promise<Extract<PurchaseOutcome, { kind: 'opened' }>> {
  return { kind: 'opened', account: await accountView(db, attempt.sellerId, accessId), payment: paymentView(attempt), settled };
}

export function paymentView(attempt: PaymentFields): PurchasePayment {
  return {
    id: attempt.id,
    amountUsd: formatUsd(attempt.amountMicros),
    status: attempt.status,
    settleTransactionHash: attempt.settleTxHash,
    holdTransactionHash: attempt.holdTxHash,
    refundTransactionHash: attempt.refundTxHash,
  };
}

async function accountView(db: Db, sellerId: string, accessId: string): Promise<AccountView> {
  const [view] = await accountViews(db, sellerId, { id: accessId });
  return view!;
}

/**
 * `GET /purchases/receipt`: the accounts the agent holds with the seller, and those of the human
 * who owns it, with the credit its wallet has there (remainders of payments charged less).
 */
export async function purchaseReceipt(
  db: Db,
  input: { sellerId: string; agentId: string },
): Promise<{ purchases: AccountView[]; creditUsd: string }> {
  const agent = await db.agent.findUniqueOrThrow({ where: { id: input.agentId }, select: { buyerId: true, walletAddress: true } });
  return {
    purchases: await accountViews(db, input.sellerId, heldBy(input.agentId, agent.buyerId)),
    creditUsd: formatUsd(await creditBalance(sqlOf(db), input.sellerId, agent.walletAddress)),
  };
}
