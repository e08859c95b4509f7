import type { z } from 'zod';
import { formatUsd } from '../../shared/money.js';
import type { sellerAnalytics, transaction } from '../../shared/schemas/analytics.js';
import type { Db } from '../db/client.js';
import { sessionRevenueFor } from '../sessions/session-revenue.js';
import { QUARTERS_IN, quarterOf } from './time-buckets.js';

const DAY_MS = 86_400_000;

import type { AnalyticsWindow } from './window.js';

type SellerAnalytics = z.infer<typeof sellerAnalytics>;
type Transaction = z.infer<typeof transaction>;

const RECENT = 20;

/**
 * A seller's analytics for a window: the figures are sums over its rollups (traffic-rollup.ts),
 * a few hundred rows for a year whatever the traffic; the recent transactions are the
 * newest payment attempts, read through the (seller, createdAt) index.
 */
export async function sellerAnalyticsFor(
  db: Db,
  seller: { id: string; name: string; slug: string },
  window: AnalyticsWindow,
): Promise<SellerAnalytics> {
  // Quarter-hours up to the first whole UTC day of the window, then days: at most 96 + 365 rows.
  const firstDay = Math.ceil(+window.start / DAY_MS);
  const [totals, recent, sessionRevenue] = await Promise.all([
    db.$queryRaw<{ calls: unknown; attempts: unknown; transactions: unknown; revenue: unknown; wallets: unknown }[]>`
      SELECT SUM("calls") AS calls, SUM("attempts") AS attempts, SUM("transactions") AS transactions,
        CAST(SUM("revenueMicros") AS TEXT) AS revenue, SUM("newWallets") AS wallets
      FROM "SellerStat" WHERE "sellerId" = ${seller.id} AND (("grain" = 'quarter' AND "bucket" >= ${quarterOf(window.start)} AND "bucket" < ${firstDay * QUARTERS_IN.day})
        OR ("grain" = 'day' AND "bucket" >= ${firstDay}))`,
    recentTransactions(db, seller, window.start),
    sessionRevenueFor(db, seller.id, window.start),
  ]);
  const row = totals[0];
  const attempts = Number(row?.attempts ?? 0);
  const transactions = Number(row?.transactions ?? 0);
  return {
    days: window.days,
    calls: Number(row?.calls ?? 0),
    transactions,
    revenueUsd: formatUsd(BigInt((row?.revenue as string | null) ?? 0)),
    newWallets: Number(row?.wallets ?? 0),
    attempts,
    successRate: attempts === 0 ? 0 : Math.round((transactions / attempts) * 10_000) / 10_000,
    recentTransactions: recent,
    sessionRevenue,
  };
}

async function recentTransactions(db: Db, seller: { id: string; name: string; slug: string }, since: Date): Promise<Transaction[]> {
  const attempts = await db.paymentAttempt.findMany({
    where: { sellerId: seller.id, createdAt: { gte: since }, kind: { not: 'identity' }, amountMicros: { gt: 0n } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: RECENT,
  });
  const ids = (key: 'serviceId' | 'planId' | 'agentId') => [
    ...new Set(attempts.map((a) => a[key]).filter((id): id is string => id !== null)),
  ];
  const [services, plans, agents] = await Promise.all([
    db.service.findMany({ where: { id: { in: ids('serviceId') } }, select: { id: true, name: true, slug: true } }),
    db.plan.findMany({ where: { id: { in: ids('planId') } }, select: { id: true, name: true } }),
    db.agent.findMany({ where: { id: { in: ids('agentId') } }, select: { id: true, walletAddress: true } }),
  ]);
  const byId = <T extends { id: string }>(rows: T[]) => new Map(rows.map((r) => [r.id, r]));
  const [service, plan, agent] = [byId(services), byId(plans), byId(agents)];
  return attempts.map((a) => {
    const settled = a.status === 'settled' || a.status === 'refund_owed';
    return {
      id: a.id,
      kind: a.kind as Transaction['kind'],
      status: a.status as Transaction['status'],
      paymentMethod: (a.paymentMethod ?? 'x402_wallet') as Transaction['paymentMethod'],
      amountUsd: formatUsd(settled ? (a.chargedMicros ?? a.amountMicros) : a.amountMicros),
      network: a.network ?? '',
      protocol: (a.protocol ?? 'x402') as Transaction['protocol'],
      createdAt: a.createdAt.toISOString(),
      verifiedAt: a.verifiedAt?.toISOString() ?? null,
      seller,
      service: (a.serviceId && service.get(a.serviceId)) || null,
      plan: (a.planId && plan.get(a.planId)) || null,
      agent: (a.agentId && agent.get(a.agentId)) || null,
    };
  });
}
