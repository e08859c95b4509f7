import { randomBytes } from 'node:crypto';
import type nock from 'nock';
import Stripe from 'stripe';
import { Agent, request } from 'undici';
import { injectFaults } from './faults.js';

type Tap = { teardown: (fn: () => unknown) => void };

/**
 * The card provider in tests. Its HTTP API cannot be reached from here, so nock stands in for it,
 * scoped to its host; its objects are shaped as its API documents them, and webhook payloads are
 * signed with the provider's own SDK, so hub's real verification runs.
 */

export const PROVIDER_API = 'https://api.stripe.com';

/** Keys in the provider's formats: a test configuration, never a real account's. */
export function cardEnv(extra: Record<string, string> = {}): Record<string, string> & { HUB_STRIPE_WEBHOOK_SECRET: string } {
  return {
    HUB_STRIPE_SECRET_KEY: `sk_test_${randomBytes(12).toString('hex')}`,
    HUB_STRIPE_PUBLISHABLE_KEY: 'pk_test_hubtests',
    HUB_STRIPE_WEBHOOK_SECRET: `whsec_${randomBytes(16).toString('hex')}`,
    HUB_STRIPE_MAX_RETRIES: '0',
    HUB_STRIPE_TIMEOUT_MS: '1000',
    ...extra,
  };
}

/** nock on for the provider's host only (faults.ts explains why it is off otherwise). */
export function providerApi(t: Tap): nock.Scope {
  return injectFaults(t, PROVIDER_API).scope;
}

/**
 * Calls to hub through an undici agent of the test's own: nock does not see those, so they reach
 * the real server with their bodies while the provider's host is intercepted.
 */
const direct = new Agent();

export type HubReply = { status: number; body: any };

export async function callHub(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<HubReply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const res = await request(base + path, { method: method as 'POST', headers, body, dispatcher: direct });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

/** A webhook delivery as the provider sends it: the JSON payload and its `Stripe-Signature`. */
export function signedEvent(secret: string, event: { id: string; type: string; object: Record<string, unknown>; account?: string }) {
  const payload = JSON.stringify({
    id: event.id,
    object: 'event',
    api_version: '2026-10-28.endive',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    ...(event.account ? { account: event.account } : {}),
    type: event.type,
    data: { object: event.object },
  });
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
  return { payload, signature };
}

const now = () => Math.floor(Date.now() / 1000);

/** A Subscription object (API 2026-10-28): the billing period sits on its item. */
export function subscriptionObject(id: string, status: string, options: { trialEnd?: number | null } = {}) {
  const start = now();
  return {
    id,
    object: 'subscription',
    status,
    cancel_at_period_end: false,
    customer: 'cus_Test0001',
    trial_end: options.trialEnd ?? null,
    trial_start: options.trialEnd ? start : null,
    created: start,
    livemode: false,
    metadata: {},
    items: {
      object: 'list',
      has_more: false,
      url: `/v1/subscription_items?subscription=${id}`,
      data: [
        {
          id: 'si_Test0001',
          object: 'subscription_item',
          current_period_start: start,
          current_period_end: start + 30 * 86400,
          quantity: 1,
        },
      ],
    },
  };
}

/** A Checkout Session object, with its subscription expanded when given. */
export function checkoutSessionObject(id: string, status: 'open' | 'complete' | 'expired', subscription: unknown = null) {
  return {
    id,
    object: 'checkout.session',
    mode: 'subscription',
    ui_mode: 'elements',
    status,
    payment_status: status === 'complete' ? 'paid' : 'unpaid',
    client_secret: `${id}_secret_${randomBytes(6).toString('hex')}`,
    url: null,
    currency: 'usd',
    livemode: false,
    created: now(),
    expires_at: now() + 86400,
    metadata: {},
    subscription,
  };
}

/** A PaymentIntent (API 2026-07-29.preview, as hub creates one with a shared payment token), confirmed. */
export function paymentIntentObject(
  id: string,
  options: { amount: number; status?: string; metadata?: Record<string, string>; chargeId?: string },
) {
  const status = options.status ?? 'succeeded';
  return {
    id,
    object: 'payment_intent',
    amount: options.amount,
    amount_capturable: 0,
    amount_received: status === 'succeeded' ? options.amount : 0,
    automatic_payment_methods: { allow_redirects: 'never', enabled: true },
    capture_method: 'automatic',
    client_secret: `${id}_secret_${randomBytes(6).toString('hex')}`,
    confirmation_method: 'automatic',
    created: now(),
    currency: 'usd',
    latest_charge: status === 'succeeded' ? (options.chargeId ?? `ch_${id.slice(3)}`) : null,
    livemode: false,
    metadata: options.metadata ?? {},
    payment_method: 'pm_1TestCard',
    payment_method_types: ['card'],
    status,
  };
}

/** A Charge object as the provider sends it in `charge.refunded`. */
export function chargeObject(paymentIntentId: string, amountCents: number, refundedCents: number, chargeId = 'ch_3TestCharge') {
  return {
    id: chargeId,
    object: 'charge',
    amount: amountCents,
    amount_captured: amountCents,
    amount_refunded: refundedCents,
    captured: true,
    currency: 'usd',
    paid: true,
    refunded: refundedCents === amountCents,
    status: 'succeeded',
    payment_intent: paymentIntentId,
    livemode: false,
  };
}

/** A Dispute object (`charge.dispute.*`). */
export function disputeObject(paymentIntentId: string, status: string, amountCents: number, chargeId = 'ch_3TestCharge') {
  return {
    id: `du_${randomBytes(6).toString('hex')}`,
    object: 'dispute',
    amount: amountCents,
    currency: 'usd',
    charge: chargeId,
    payment_intent: paymentIntentId,
    reason: 'fraudulent',
    status,
    livemode: false,
  };
}

/** A Refund object, as `refunds.create` answers it. */
export function refundObject(paymentIntentId: string, amountCents: number) {
  return {
    id: `re_${randomBytes(8).toString('hex')}`,
    object: 'refund',
    amount: amountCents,
    charge: `ch_${paymentIntentId.slice(3)}`,
    created: now(),
    currency: 'usd',
    metadata: {},
    payment_intent: paymentIntentId,
    reason: null,
    status: 'succeeded',
  };
}

/** A card the provider declines: its 402 `card_error`. */
export const DECLINED = {
  error: {
    type: 'card_error',
    code: 'card_declined',
    decline_code: 'insufficient_funds',
    message: 'Your card has insufficient funds.',
    doc_url: 'https://docs.stripe.com/error-codes/card-declined',
  },
};
