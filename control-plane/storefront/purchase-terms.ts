import type { PurchaseTerms } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { formatUsd, parseUsd } from '../../shared/money.js';
import type { Db } from '../db/client.js';

/** A purchase amount is whole cents: 10,000 micro-USD. */
const CENT_MICROS = 10_000n;

/**
 * What a purchase at the pay URL (`POST /extend`) is refused for before any payment is asked, in
 * the order an agent can act on: a storefront that sells nothing (sales off, or no plan but
 * pay-as-you-go) is 501 `entitlements_not_available`; then the plan (404 `plan_not_found`, 400
 * `payg_not_purchasable`), then the amount a credit plan needs (`amount_required`,
 * `amount_not_cent_increment`, `amount_below_minimum` with the minimum). Returns the terms of a
 * purchase that passes.
 */
export async function purchaseTerms(
  db: Db,
  input: { sellerId: string; planId: string; amountUsd?: string | undefined },
): Promise<PurchaseTerms> {
  const seller = await db.seller.findUniqueOrThrow({
    where: { id: input.sellerId },
    select: { salesEnabled: true, services: { select: { plans: { select: { id: true, billingMode: true } } } } },
  });
  const plans = seller.services.flatMap((service) => service.plans);
  if (!seller.salesEnabled) throw new ApiError('entitlements_not_available', 'This seller does not sell plans at its pay URL.');
  if (!plans.some((plan) => plan.billingMode !== 'payg')) {
    throw new ApiError('entitlements_not_available', 'This seller sells no plans; its calls are paid one by one.');
  }

  const plan = plans.some((p) => p.id === input.planId) ? await db.plan.findUniqueOrThrow({ where: { id: input.planId } }) : null;
  if (!plan) throw new ApiError('plan_not_found', 'This seller has no plan with that id: see /manifest.json.');
  if (plan.billingMode === 'payg') throw new ApiError('payg_not_purchasable');

  let amountMicros = 0n;
  if (plan.billingMode === 'credit') {
    if (input.amountUsd === undefined) throw new ApiError('amount_required');
    const amount = parseUsd(input.amountUsd);
    if (!amount.ok) throw new ApiError('invalid_request', `amountUsd ${amount.reason}`);
    if (amount.micros % CENT_MICROS !== 0n) throw new ApiError('amount_not_cent_increment');
    if (amount.micros < plan.minimumPurchaseMicros) {
      throw new ApiError('amount_below_minimum', undefined, { minimumPurchaseUsd: formatUsd(plan.minimumPurchaseMicros) });
    }
    amountMicros = amount.micros;
  }
  return {
    planId: plan.id,
    billingMode: plan.billingMode,
    priceUsd: formatUsd(plan.basePriceMicros + amountMicros),
  };
}
