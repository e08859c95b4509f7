import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { AccountView } from '../../shared/contract.js';
import { formatUsd } from '../../shared/money.js';
import type { Db } from '../db/client.js';
import { accessPeriodStart } from '../usage/periods.js';

const INCLUDE = {
  plan: { include: { prices: { include: { meter: { select: { key: true } } } } } },
  meterUsage: true,
  creditUnits: true,
  writes: { orderBy: { stateVersion: 'desc' }, take: 1, select: { status: true } },
} as const;

/** Accounts as agents (their receipt) and sellers (the management API) see them, oldest first. */
export async function accountViews(db: Db, sellerId: string, where: Prisma.AccessWhereInput = {}): Promise<AccountView[]> {
  const rows = await db.access.findMany({
    where: { ...where, sellerId },
    include: INCLUDE,
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  // Payments captured for accounts the seller never took (delivery/outcomes.ts): owed back by the
  // seller. Payments held in the escrow, and those returned from it (payments/settlement/hold.ts).
  const payments = await db.paymentAttempt.findMany({
    where: {
      status: { in: ['refund_owed', 'reserved', 'settling', 'releasing', 'released'] },
      accessId: { in: rows.map((row) => row.id) },
    },
    select: { id: true, accessId: true, status: true, amountMicros: true, payoutTo: true, refundTxHash: true },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const sum = (accessId: string, counted: (p: (typeof payments)[number]) => boolean) =>
    payments.filter((p) => p.accessId === accessId && counted(p)).reduce((total, p) => total + p.amountMicros, 0n);
  // In the escrow until its payout or its return is on chain.
  const held = (p: (typeof payments)[number]) => p.payoutTo !== null && ['reserved', 'settling', 'releasing'].includes(p.status);
  const refunds = (accessId: string) =>
    payments
      .filter((p) => p.accessId === accessId && p.status === 'released' && p.refundTxHash !== null)
      .map((p) => ({ paymentId: p.id, amountUsd: formatUsd(p.amountMicros), transactionHash: p.refundTxHash }));
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
      creditUnits:
        row.plan.includedCreditUnits > 0
          ? {
              label: row.plan.includedCreditUnitLabel,
              includedUnits: row.plan.includedCreditUnits,
              usedUnits: Number(row.creditUnits.find((u) => u.periodStart.getTime() === periodStart.getTime())?.unitsUsed ?? 0n),
            }
          : null,
      stateVersion: row.stateVersion,
      createdAt: row.createdAt.toISOString(),
      canceledAt: row.canceledAt?.toISOString() ?? null,
      refundOwedUsd: formatUsd(sum(row.id, (p) => p.status === 'refund_owed')),
      heldUsd: formatUsd(sum(row.id, held)),
      refunds: refunds(row.id),
    };
  });
}
