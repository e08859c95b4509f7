import type { Attributes } from '@opentelemetry/api';
import type { ChallengeInput, ChallengeOutcome, ClaimedPayment, ClaimInput, SettledRequest, SettleInput } from '../../shared/contract.js';
import { challengeAttributes, settledAttributes, traceAttributes } from '../../shared/trace-attributes.js';

/**
 * What the span of an internal call on the paid path says, read from its input and answer: ids,
 * amounts and outcomes. A claim's input also carries the payment's payload and signature; only
 * its id and protocol are read here.
 */
export function callAttributes(procedure: string, input: unknown, data: unknown): Attributes {
  if (procedure === 'internal.issuePaymentChallenge') {
    const { sellerId, requestId } = input as ChallengeInput;
    return { ...traceAttributes({ sellerId, requestId }), ...challengeAttributes(data as ChallengeOutcome) };
  }
  if (procedure === 'internal.claimPaidRequest') {
    const { paymentId, protocol } = input as ClaimInput;
    return traceAttributes({ paymentId, protocol, status: 'claimed', requestId: (data as ClaimedPayment).requestId });
  }
  if (procedure === 'internal.settlePaidRequest') {
    const { paymentId, upstreamStatus } = input as SettleInput;
    return { ...traceAttributes({ paymentId, httpStatus: upstreamStatus }), ...settledAttributes(data as SettledRequest) };
  }
  return {};
}
