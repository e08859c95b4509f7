import type { Attributes } from '@opentelemetry/api';
import type { ChallengeOutcome, SettledRequest } from './contract.js';

/**
 * The attributes hub puts on its spans, named once for both processes. Ids, amounts (USD as
 * six-decimal strings, as hub writes money everywhere) and outcomes only: never a payment's
 * payload, signature or authorization, never a token or secret (docs/decisions.md#D-253).
 */
export const TRACE_ATTRIBUTES = {
  paymentId: 'hub.payment.id',
  network: 'hub.payment.network',
  amountUsd: 'hub.payment.amount_usd',
  chargedUsd: 'hub.payment.charged_usd',
  scheme: 'hub.payment.scheme',
  protocol: 'hub.payment.protocol',
  status: 'hub.payment.status',
  sellerId: 'hub.seller.id',
  requestId: 'hub.request.id',
  httpStatus: 'http.response.status_code',
  method: 'http.request.method',
  route: 'http.route',
  settled: 'hub.pending.settled',
  opened: 'hub.pending.opened',
  released: 'hub.pending.released',
} as const;

export type TraceFields = Partial<Record<keyof typeof TRACE_ATTRIBUTES, string | number | null | undefined>>;

/** `fields` under their attribute names; absent and null ones are left out. */
export function traceAttributes(fields: TraceFields): Attributes {
  const attributes: Attributes = {};
  for (const [field, value] of Object.entries(fields)) {
    if (value !== undefined && value !== null) attributes[TRACE_ATTRIBUTES[field as keyof typeof TRACE_ATTRIBUTES]] = value;
  }
  return attributes;
}

/** What a span says of a challenge: the payment asked for, or how the call was paid instead. */
export function challengeAttributes(outcome: ChallengeOutcome) {
  if (outcome.kind === 'paid_from_credit') {
    return traceAttributes({ status: outcome.kind, paymentId: outcome.paymentId, amountUsd: outcome.amountUsd, scheme: 'credit' });
  }
  if (outcome.kind === 'plan_to_buy') return traceAttributes({ status: outcome.kind });
  const { challenge } = outcome;
  return traceAttributes({
    status: 'challenged',
    paymentId: challenge.paymentId,
    amountUsd: challenge.amountUsd,
    network: challenge.network,
    scheme: challenge.requirements.scheme,
  });
}

/** What a span says of a settlement: its outcome, and what was charged once billed. */
export function settledAttributes(settled: SettledRequest) {
  if (settled.kind !== 'billed') return traceAttributes({ status: settled.kind });
  return traceAttributes({ status: settled.billing.status, chargedUsd: settled.billing.chargedUsd });
}
