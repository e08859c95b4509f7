import { assertSlug, assertUsageQuantity } from '../shared/usage.js';

/**
 * The 402 body a seller's API answers when it wants to be paid (spec: Bodies the seller's API
 * returns to the service). hub prices `usage` with the service's plans and challenges the agent;
 * the agent never sees this body. `usage: []` asks only for the agent's identity.
 */
export type PaymentRequiredBody = {
  error: 'payment_required';
  serviceSlug: string;
  usage: { meterSlug: string; quantity: number }[];
  planSlug?: string;
};

export const PAYMENT_REQUIRED_STATUS = 402;

export function paymentRequiredBody(args: {
  serviceSlug: string;
  usage: readonly { meterSlug: string; quantity: number }[];
  planSlug?: string;
}): PaymentRequiredBody {
  assertSlug(args.serviceSlug, 'serviceSlug');
  const usage = args.usage.map(({ meterSlug, quantity }, i) => {
    assertSlug(meterSlug, `usage[${i}].meterSlug`);
    assertUsageQuantity(quantity, `usage[${i}].quantity`);
    return { meterSlug, quantity };
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
