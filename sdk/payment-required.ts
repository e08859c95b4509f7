import { assertSlug, assertUsageItems, assertUsageQuantity } from '../shared/usage.js';

/**
 * The 402 body a seller's API answers when it wants to be paid (spec: Bodies the seller's API
 * returns to the service). hub prices `usage` with the service's plans and challenges the agent;
 * the agent never sees this body. `usage: []` asks only for the agent's identity.
 */
export type PaymentRequiredBody = {
  error: 'payment_required';
  serviceSlug: string;
  usage: PaymentRequiredItem[];
  planSlug?: string;
};

/**
 * A meter the call uses: `quantity` when known before the call. Without it the call is priced at
 * a ceiling (`maxQuantity`, else the price's `defaultMaxQuantity`): the agent authorizes the
 * ceiling, and is charged what the response's `hub-usage` (or a usage report) says was used.
 */
export type PaymentRequiredItem = { meterSlug: string; quantity: number } | { meterSlug: string; maxQuantity?: number };

export const PAYMENT_REQUIRED_STATUS = 402;

export function paymentRequiredBody(args: {
  serviceSlug: string;
  usage: readonly PaymentRequiredItem[];
  planSlug?: string;
}): PaymentRequiredBody {
  assertSlug(args.serviceSlug, 'serviceSlug');
  assertUsageItems(args.usage, 'usage');
  const usage = args.usage.map((item, i): PaymentRequiredItem => {
    assertSlug(item.meterSlug, `usage[${i}].meterSlug`);
    if ('quantity' in item) {
      assertUsageQuantity(item.quantity, `usage[${i}].quantity`);
      return { meterSlug: item.meterSlug, quantity: item.quantity };
    }
    if (item.maxQuantity === undefined) return { meterSlug: item.meterSlug };
    assertUsageQuantity(item.maxQuantity, `usage[${i}].maxQuantity`);
    return { meterSlug: item.meterSlug, maxQuantity: item.maxQuantity };
  });
  const body: PaymentRequiredBody = { error: 'payment_required', serviceSlug: args.serviceSlug, usage };
  if (args.planSlug !== undefined) {
    assertSlug(args.planSlug, 'planSlug');
    body.planSlug = args.planSlug;
  }
  return body;
}

/** The identity challenge: pay nothing, prove who you are. */
export function identityRequiredBody(serviceSlug: string): PaymentRequiredBody {
  return paymentRequiredBody({ serviceSlug, usage: [] });
}
