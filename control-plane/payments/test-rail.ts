import { ApiError } from '../../shared/errors.js';
import type { PaymentRail } from './rail.js';

/**
 * A sandbox seller is paid on a test rail, never on one whose money is real: every payment
 * attempt is made here first (challenge.ts › newAttempt) on the rail `railFor` picked (the test
 * rail beside a live one, rails.ts), so no sandbox payment can reach a live rail, and none can be
 * claimed or settled there: each later step takes the attempt's own rail (docs/decisions.md#D-228,
 * #D-313).
 */
export function refuseLiveRailForSandbox(rail: PaymentRail, seller: { sandbox: boolean }): void {
  if (seller.sandbox && !rail.test)
    throw new ApiError(
      'service_unavailable',
      'This seller is in sandbox, and this hub takes payments on a live rail only: sandbox payments need a test rail beside it (HUB_TEST_FACILITATOR_URL on a test network, or a local chain named by HUB_CHAIN_FILE).',
    );
}
