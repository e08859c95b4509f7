import { z } from 'zod';
import { absoluteUrl, idSchema, timestamp } from './fields.js';

/** Wire shapes of the card-payment routes (spec: Checkout confirm 200 response, Plan state object). */

/**
 * Where the provider sends a person back: an absolute https URL (http only on a loopback host, for
 * development), without credentials or fragment; a query is kept (dashboards put state there).
 */
export const returnUrl = z
  .string()
  .max(2000, 'must be at most 2000 characters')
  .refine((value) => {
    const url = absoluteUrl(value);
    if (!url) return false;
    const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
    const scheme = url.protocol === 'https:' || (url.protocol === 'http:' && loopback);
    return scheme && !url.username && !url.password && !url.hash;
  }, 'must be an absolute https URL (http only on localhost) without credentials or fragment')
  .meta({ example: 'https://dashboard.example.com/settings/billing' });

/** Spec: Limits › Checkout `sessionId`, 1 to 255 characters. */
export const checkoutSessionId = z
  .string()
  .min(1, 'sessionId must be 1 to 255 characters')
  .max(255, 'sessionId must be 1 to 255 characters');

/** Spec: Plan state object: all six fields required, no others. */
export const planState = z.strictObject({
  id: z.string(),
  status: z.string(),
  currentPeriodStart: timestamp.nullable(),
  currentPeriodEnd: timestamp.nullable(),
  cancelAtPeriodEnd: z.boolean(),
  trialEnd: timestamp.nullable(),
});
export type PlanState = z.infer<typeof planState>;

/** A UTC timestamp ending in Z (spec: Checkout confirm 200 response › trialEnd). */
const utcTimestamp = timestamp.regex(/Z$/, 'must end in Z');

/** Spec: Checkout confirm 200 response: all fields required, no extra fields. */
export const checkoutConfirmation = z.strictObject({
  status: z.enum(['active', 'requires_action', 'processing']),
  clientSecret: z.string().nullable(),
  publishableKey: z.string().nullable(),
  plan: planState.nullable(),
  trialAvailable: z.boolean().nullable(),
  trialEnd: utcTimestamp.nullable(),
  access: z.strictObject({ state: z.enum(['active', 'none']) }).nullable(),
});
export type CheckoutConfirmation = z.infer<typeof checkoutConfirmation>;

export const checkoutStartInput = z.strictObject({
  planSlug: z.string().min(1).max(63),
  returnUrl,
});

export const checkoutStarted = z.strictObject({
  sessionId: z.string(),
  clientSecret: z.string().nullable(),
  publishableKey: z.string(),
  plan: z.strictObject({ slug: z.string(), name: z.string(), priceUsd: z.string(), interval: z.enum(['month', 'year']) }),
  trialDays: z.number().int(),
});

export const accountLinkInput = z.strictObject({
  sellerId: idSchema('seller'),
  returnUrl,
  refreshUrl: returnUrl,
});

export const accountLink = z.strictObject({
  url: z.string(),
  expiresAt: timestamp,
  accountId: z.string(),
  chargesEnabled: z.boolean(),
});
