import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import { finishPurchases } from '../storefront/purchase.js';
import type { PaymentRail } from './rail.js';
import { finishPendingSettlements, releaseStrandedCalls } from './settle.js';

/**
 * Every `intervalMs`, settles again what was left `settling` (unknown outcome, crash, restart), then
 * opens the accounts such purchases paid for, and releases the paid calls a crash left in flight
 * (giving a credit-paid call its draw back).
 */
export function startPendingSettlementLoop(db: Db, rail: PaymentRail | undefined, logger: Logger, intervalMs = 15_000): () => void {
  if (!rail) return () => {};
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    finishPendingSettlements(db, rail)
      .then((n) => n && logger.info({ settled: n }, 'finished pending settlements'))
      .then(() => finishPurchases(db))
      .then((n) => n && logger.info({ opened: n }, 'finished purchases their buyers stopped waiting for'))
      .then(() => releaseStrandedCalls(db))
      .then((n) => n && logger.info({ released: n }, 'released paid calls that never settled'))
      .catch((err) => logger.warn({ err }, 'finishing pending settlements failed'))
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
