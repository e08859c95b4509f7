import type { Logger } from 'pino';
import type { CardPaymentsConfig } from '../../shared/config.js';
import { requestCardRefunds } from '../card-payments/card-refunds.js';
import type { Db } from '../db/client.js';
import { type PaymentRails, railsIn } from '../payments/rails.js';
import { finishPendingPayments } from './pending-payments.js';

/**
 * Every `intervalMs`, finishes what was left pending (pending-payments.ts), and asks the card
 * provider again for the refunds it has not accepted yet (card-payments/card-refunds.ts), one
 * round at a time.
 */
export function startPendingSettlementLoop(
  db: Db,
  rails: PaymentRails,
  logger: Logger,
  intervalMs = 15_000,
  cards?: CardPaymentsConfig,
): () => void {
  const onChain = railsIn(rails).length > 0;
  if (!onChain && !cards) return () => {};
  let running = false;
  const settlements = async () => {
    if (!onChain) return;
    const { settled, opened, released } = await finishPendingPayments(db, rails);
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
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
