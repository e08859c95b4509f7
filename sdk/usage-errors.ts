/** hub answered something the contract does not allow (bad key, missing scope, 5xx), or nothing at all. */
export class UsageApiError extends Error {
  override name = 'UsageApiError';
  /** The HTTP status, or 0 when no response arrived. */
  readonly status: number;
  readonly body: unknown;
  constructor(message: string, status: number, body: unknown, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.body = body;
  }
}

/**
 * hub's usage API is unavailable: no answer in time, a 5xx or 429, or an answer that is not the
 * contract's. Thrown under the `failClosed` outage policy (and by a `failOpen` report that could
 * not be kept for later). Answer the agent with `ALLOWANCE_UNAVAILABLE_STATUS` and
 * `allowanceUnavailableBody()`; `withHubSignature` does so itself for an error its handler throws.
 */
export class AllowanceUnavailableError extends UsageApiError {
  override name = 'AllowanceUnavailableError';
  readonly code = 'allowance_unavailable';
}

/** spec: Bodies the seller's API returns to the service: 503 when the allowance API is unreachable under a fail-closed policy. */
export const ALLOWANCE_UNAVAILABLE_STATUS = 503;

export function allowanceUnavailableBody(): { error: 'allowance_unavailable' } {
  return { error: 'allowance_unavailable' };
}
