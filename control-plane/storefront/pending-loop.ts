import type { Logger } from 'pino';
import { inSpan, type Tracing } from '../../runtime/tracing.js';
import type { CardPaymentsConfig } from '../../shared/config.js';
import { traceAttributes } from '../../shared/trace-attributes.js';
import { requestCardRefunds } from '../card-payments/card-refunds.js';
import type { Db } from '../db/client.js';
import { type PaymentRails, railsIn } from '../payments/rails.js';
import { finishPendingPayments } from './pending-payments.js';

/**
 * Every `pending.intervalMs`, finishes what was left pending (pending-payments.ts), and asks the card
 * provider again for the refunds it has not accepted yet (card-payments/card-refunds.ts), one
 * round at a time. Traced, each pass is a trace of its own (`pending payments`), with what it finished.
 */
export function startPendingSettlementLoop(
  db: Db,
  rails: PaymentRails,
  logger: Logger,
  pending: { intervalMs: number; strandedCallMs?: number } = { intervalMs: 15_000 },
  cards?: CardPaymentsConfig,
  tracing?: Tracing,
): () => void {
  const onChain = railsIn(rails).length > 0;
  if (!onChain && !cards) return () => {};
  let running = false;
  const settlements = async () => {
    if (!onChain) return;
    const { settled, opened, released } = await inSpan(
      tracing,
      'pending payments',
      async (span) => {
        const finished = await finishPendingPayments(db, rails, pending.strandedCallMs);
        span?.setAttributes(traceAttributes(finished));
        return finished;
      },
      { root: true },
    );
    if (settled) logger.info({ settled }, 'finished pending settlements');
    if (opened) logger.info({ opened }, 'finished purchases their buyers stopped waiting for');
    if (released) logger.info({ released }, 'released paid calls that never settled');
  };
  const refunds = async () => {
    const accepted = cards ? await requestCardRefunds(db, cards, logger) : 0;
    if (accepted) logger.info({ accepted }, 'card refunds accepted by the provider');
  };
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    Promise.all([
      settlements().catch((err) => logger.warn({ err }, 'finishing pending settlements failed')),
      refunds().catch((err) => logger.warn({ err }, 'asking for card refunds failed')),
    ]).finally(() => (running = false));
  }, pending.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
