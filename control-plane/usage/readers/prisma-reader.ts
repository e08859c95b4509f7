import type { Db } from '../../db/client.js';
import type { UsageReader } from '../reader.js';

/** The usage reads through the ORM: for PostgreSQL, and for SQLite databases held in memory. */
export function prismaReader(db: Db): UsageReader {
  return {
    servicesNamed: (organizationId, slug) => db.service.findMany({ where: { organizationId, slug }, select: { id: true, sellerId: true } }),

    callPayment: async (organizationId, requestId, statuses) =>
      (await db.paymentAttempt.findFirst({
        where: { requestId, organizationId, kind: 'call', status: { in: [...statuses] } },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        select: { id: true, status: true, serviceId: true, planId: true, usageJson: true },
      })) ?? undefined,

    request: async (requestId) => {
      const row = await db.requestRecord.findUnique({
        where: { id: requestId },
        select: {
          sellerId: true,
          serviceId: true,
          agentId: true,
          buyerId: true,
          mode: true,
          agent: { select: { buyerId: true, claimedAt: true, buyer: { select: { emailVerifiedAt: true } } } },
        },
      });
      if (!row) return undefined;
      const { agent, ...request } = row;
      return {
        ...request,
        agent: agent && {
          buyerId: agent.buyerId,
          claimed: agent.claimedAt !== null,
          ownerEmailVerified: Boolean(agent.buyer?.emailVerifiedAt),
        },
      };
    },

    paygPlan: async (serviceId) =>
      (await db.plan.findFirst({
        where: { serviceId, billingMode: 'payg' },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: { id: true, interval: true },
      })) ?? undefined,

    accesses: (service, agentId, ownerId) =>
      db.access.findMany({
        where: {
          sellerId: service.sellerId,
          plan: { serviceId: service.id },
          OR: ownerId ? [{ agentId }, { buyerId: ownerId }] : [{ agentId }],
        },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: {
          id: true,
          agentId: true,
          planId: true,
          status: true,
          periodStart: true,
          periodEnd: true,
          creditGrantedMicros: true,
          balanceMicros: true,
        },
      }),

    meters: async (serviceId, keys) => {
      const rows = await db.meter.findMany({ where: { serviceId, key: { in: [...keys] } }, select: { id: true, key: true } });
      return new Map(rows.map((row) => [row.key, row.id]));
    },

    prices: async (planIds, meterIds) => {
      const rows = await db.planMeterPrice.findMany({
        where: { planId: { in: [...planIds] }, meterId: { in: [...meterIds] } },
        select: { planId: true, meterId: true, priceMicros: true, unitSize: true, includedUnits: true, defaultMaxQuantity: true },
      });
      return rows.map((row) => ({
        ...row,
        unitSize: BigInt(row.unitSize),
        includedUnits: BigInt(row.includedUnits),
        defaultMaxQuantity: row.defaultMaxQuantity === null ? null : BigInt(row.defaultMaxQuantity),
      }));
    },

    accessUsage: (accessIds, meterIds, periodStarts) =>
      db.accessMeterUsage.findMany({
        where: { accessId: { in: [...accessIds] }, meterId: { in: [...meterIds] }, periodStart: { in: [...periodStarts] } },
        select: { accessId: true, meterId: true, periodStart: true, unitsUsed: true },
      }),

    freePoolUsage: (buyerId, periodStart, meterIds) =>
      db.includedUnitsUsage.findMany({
        where: { buyerId, periodStart, meterId: { in: [...meterIds] } },
        select: { meterId: true, unitsUsed: true },
      }),

    usageEvent: async (organizationId, idempotencyKey) =>
      // findFirst, not findUnique: the client batches concurrent findUniques into one query,
      // which a burst of reports would push past SQLite's limit on bound parameters.
      (await db.usageEvent.findFirst({
        where: { organizationId, idempotencyKey },
        select: { id: true, bodyDigest: true, costMicros: true },
      })) ?? undefined,
  };
}
