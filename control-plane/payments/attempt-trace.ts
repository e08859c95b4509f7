import { activeSpan } from '../../runtime/tracing.js';
import { formatUsd } from '../../shared/money.js';
import { traceAttributes } from '../../shared/trace-attributes.js';
import type { Attempt } from './attempt-rows.js';
import type { PaymentRail } from './rail.js';
import { PAYMENT_SCHEME } from './requirements.js';

/**
 * Names the payment attempt a procedure works on in its span, when traced: what the proxy's call
 * did not know (the seller, the amount authorized, the network and scheme it is paid on).
 */
export function traceAttempt(attempt: Attempt, rail: PaymentRail | undefined): void {
  activeSpan()?.setAttributes(
    traceAttributes({
      paymentId: attempt.id,
      sellerId: attempt.sellerId,
      amountUsd: formatUsd(attempt.amountMicros),
      network: attempt.protocol === 'credit' ? 'credit' : rail?.network,
      scheme: attempt.protocol === 'credit' ? 'credit' : PAYMENT_SCHEME,
    }),
  );
}
