import type { z } from 'zod';
import { formatUsd } from '../../shared/money.js';
import type { creditAnalytics } from '../../shared/schemas/analytics.js';
import type { Db } from '../db/client.js';
import type { AnalyticsWindow } from './window.js';

/**
 * What payers hold with a seller as credit (the remainders of `exact` payments charged less than
 * they authorized), and how it moved in the window. Outstanding credit is money the seller has
 * received and still owes in calls; it is read from the ledger's balances, one row per payer.
 */
export async function creditAnalyticsFor(db: Db, sellerId: string, window: AnalyticsWindow): Promise<z.infer<typeof creditAnalytics>> {
  const [held, moved] = await Promise.all([
    db.payerCredit.aggregate({ where: { sellerId, balanceMicros: { gt: 0n } }, _sum: { balanceMicros: true }, _count: true }),
    db.creditEntry.groupBy({ by: ['reason'], where: { sellerId, createdAt: { gte: window.start } }, _sum: { deltaMicros: true } }),
  ]);
  const sumOf = (reason: string) => moved.find((row) => row.reason === reason)?._sum.deltaMicros ?? 0n;
  return {
    days: window.days,
    timeZone: window.timeZone,
    outstandingUsd: formatUsd(held._sum.balanceMicros ?? 0n),
    payers: held._count,
    creditedUsd: formatUsd(sumOf('remainder')),
    // A draw whose call was not delivered comes back as a `return`: it was never spent.
    drawnUsd: formatUsd(-sumOf('draw') - sumOf('return')),
  };
}
