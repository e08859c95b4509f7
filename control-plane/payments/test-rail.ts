import { ApiError } from '../../shared/errors.js';
import type { PaymentRail } from './rail.js';

/**
 * A sandbox seller is paid on a test rail, never on one whose money is real: every payment
 * attempt is made here first (challenge.ts › newAttempt), so no sandbox payment can reach a
 * live rail, and none can be claimed or settled there (docs/decisions.md#D-228).
 */
export function refuseLiveRailForSandbox(rail: PaymentRail, seller: { sandbox: boolean }): void {
  if (seller.sandbox && !rail.test)
    throw new ApiError(
      'service_unavailable',
      'This seller is in sandbox, and this hub takes payments on a live rail only: sandbox payments need a test rail (the local chain, or HUB_PAYMENT_TEST_RAIL=1 for a test network).',
    );
}
