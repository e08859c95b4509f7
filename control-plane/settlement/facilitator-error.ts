/**
 * A facilitator could not give an answer: the remote facilitator or the chain's RPC timed out,
 * was unreachable, or answered something that is not an x402 response. Not the payer's fault, so
 * the proxy answers it with a 503, never with a 402.
 */
export class FacilitatorUnavailableError extends Error {
  override name = 'FacilitatorUnavailableError';

  constructor(
    readonly kind: 'timeout' | 'network' | 'http_status' | 'malformed_response',
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
