import { ApiError } from '../../../shared/errors.js';
import type { BillingMode, Interval, PlanKind } from '../../../shared/schemas/plans.js';

/**
 * How a plan's fields must fit together (hub's rules where the spec is silent; see
 * docs/decisions.md): pay-as-you-go is charged per call, so it has no period, no base price and
 * is never a free trial; subscriptions renew, so they have a month or year period.
 */

export function defaultInterval(billingMode: BillingMode): Interval {
  return billingMode === 'subscription' || billingMode === 'subscription_usage' ? 'month' : 'none';
}

/** Free trials ask for a verified email unless the seller relaxes it (spec: Resources › Plan). */
export function defaultVerifiedEmailPolicy(kind: PlanKind) {
  return kind === 'free_trial' ? 'required' : 'off';
}

export function checkPlanShape(plan: { kind: string; billingMode: string; interval: string; basePriceMicros: bigint }): void {
  if (plan.billingMode === 'payg') {
    if (plan.interval !== 'none') throw ApiError.validation('interval: a payg plan has no period; use none');
    if (plan.basePriceMicros !== 0n) throw ApiError.validation('basePriceUsd: a payg plan has no base price; price its meters instead');
    if (plan.kind === 'free_trial') throw ApiError.validation('kind: a free_trial plan cannot be payg');
  }
  if ((plan.billingMode === 'subscription' || plan.billingMode === 'subscription_usage') && plan.interval === 'none') {
    throw ApiError.validation('interval: a subscription renews every month or year');
  }
  if (plan.kind === 'free_trial' && plan.basePriceMicros !== 0n) {
    throw ApiError.validation('basePriceUsd: a free_trial plan is free; its base price is 0');
  }
}
