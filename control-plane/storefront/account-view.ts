import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { AccountView } from '../../shared/contract.js';
import { formatUsd } from '../../shared/money.js';
import type { Db } from '../db/client.js';
import { accessPeriodStart } from '../usage/periods.js';

const INCLUDE = {
  plan: { include: { prices: { include: { meter: { select: { key: true } } } } } },
  meterUsage: true,
  writes: { orderBy: { stateVersion: 'desc' }, take: 1, select: { status: true } },
} as const;

/** Accounts as agents (their receipt) and sellers (the management API) see them, oldest first. */
export async function accountViews(db: Db, sellerId: string, where: Prisma.AccessWhereInput = {}): Promise<AccountView[]> {
  const rows = await db.access.findMany({
    where: { ...where, sellerId },
    include: INCLUDE,
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  // Payments captured for accounts the seller never took (delivery/outcomes.ts): owed back by the seller.
  const owed = await db.paymentAttempt.groupBy({
    by: ['accessId'],
    where: { status: 'refund_owed', accessId: { in: rows.map((row) => row.id) } },
    _sum: { amountMicros: true },
  });
  const owedBy = new Map(owed.map((o) => [o.accessId, o._sum.amountMicros ?? 0n]));
  return rows.map((row) => {
    const periodStart = accessPeriodStart(row);
    const used = new Map(
      row.meterUsage.filter((u) => u.periodStart.getTime() === periodStart.getTime()).map((u) => [u.meterId, u.unitsUsed]),
    );
    return {
      accessId: row.id,
      status: row.status,
      provisioningState: row.provisioningState,
      deliveryStatus: row.writes[0]?.status ?? null,
      agentId: row.agentId,
      buyerId: row.buyerId,
      plan: { id: row.plan.id, slug: row.plan.slug, name: row.plan.name, billingMode: row.plan.billingMode, interval: row.plan.interval },
      period: { start: row.periodStart?.toISOString() ?? null, end: row.periodEnd?.toISOString() ?? null },
      creditGrantedUsd: row.creditGrantedMicros === null ? null : formatUsd(row.creditGrantedMicros),
      creditReversedUsd: formatUsd(row.creditReversedMicros),
      balanceUsd: row.creditGrantedMicros === null ? null : formatUsd(row.balanceMicros),
      includedUnits: row.plan.prices
        .filter((p) => p.includedUnits > 0)
        .map((p) => ({ meterSlug: p.meter.key, includedUnits: p.includedUnits, usedUnits: Number(used.get(p.meterId) ?? 0n) })),
      stateVersion: row.stateVersion,
      createdAt: row.createdAt.toISOString(),
      canceledAt: row.canceledAt?.toISOString() ?? null,
      refundOwedUsd: formatUsd(owedBy.get(row.id) ?? 0n),
    };
  });
}
