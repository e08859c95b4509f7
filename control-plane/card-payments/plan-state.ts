import type Stripe from 'stripe';
import type { CheckoutConfirmation, PlanState } from '../../shared/schemas/card-payments.js';

/** The provider's subscription as the spec's plan state object, and what a confirm answers of it. */

/** Seconds since the epoch (the provider's clock) as an ISO timestamp ending in Z. */
export function isoFromSeconds(seconds: number | null | undefined): string | null {
  return typeof seconds === 'number' ? new Date(seconds * 1000).toISOString() : null;
}

export function planStateOf(subscription: Stripe.Subscription): PlanState {
  // The billing period sits on the subscription's item (one item: the plan's price).
  const item = subscription.items.data[0];
  return {
    id: subscription.id,
    status: subscription.status,
    currentPeriodStart: isoFromSeconds(item?.current_period_start),
    currentPeriodEnd: isoFromSeconds(item?.current_period_end),
    cancelAtPeriodEnd: subscription.cancel_at_period_end,
    trialEnd: isoFromSeconds(subscription.trial_end),
  };
}

/**
 * The confirm's `status`: `active` once the subscription serves (paid or trialing);
 * `requires_action` while its first payment waits for the customer (authentication: the client
 * secret resumes the checkout); `processing` while a payment is on its way (bank debits) or the
 * subscription is in any other state the provider is still settling.
 */
export function confirmStatusOf(subscription: Stripe.Subscription): CheckoutConfirmation['status'] {
  if (subscription.status === 'active' || subscription.status === 'trialing') return 'active';
  if (subscription.status === 'incomplete') return 'requires_action';
  return 'processing';
}
