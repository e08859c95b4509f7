import { type ErrorBody, errorCodes } from '../shared/errors.js';
import type { SignatureFailure } from '../shared/signature.js';

export type RequestFailure = SignatureFailure | 'body_too_large';

/**
 * The answer to a request that failed verification (spec: Bodies the seller's API returns to the
 * service, Seller account endpoint › Pre-handler checks). An ordinary route says only
 * `invalid_zeroclick_signature`; the account routes name the reason itself, which hub's delivery
 * engine logs before it retries with its newest secret.
 */
export function rejection(failure: RequestFailure, route: 'api' | 'account'): { status: number; body: ErrorBody } {
  if (failure === 'body_too_large') return { status: errorCodes.payload_too_large.status, body: { error: 'payload_too_large' } };
  return { status: 401, body: { error: route === 'api' ? 'invalid_zeroclick_signature' : failure } };
}
