import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import type { PaymentRail } from '../payments/rail.js';
import { finishPendingPayments } from './pending-payments.js';

/** Every `intervalMs`, finishes what was left pending (pending-payments.ts), one round at a time. */
export function startPendingSettlementLoop(db: Db, rail: PaymentRail | undefined, logger: Logger, intervalMs = 15_000): () => void {
  if (!rail) return () => {};
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    finishPendingPayments(db, rail)
      .then(({ settled, opened, released }) => {
        if (settled) logger.info({ settled }, 'finished pending settlements');
        if (opened) logger.info({ opened }, 'finished purchases their buyers stopped waiting for');
        if (released) logger.info({ released }, 'released paid calls that never settled');
      })
      .catch((err) => logger.warn({ err }, 'finishing pending settlements failed'))
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
