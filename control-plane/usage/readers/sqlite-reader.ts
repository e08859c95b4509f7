import Database from 'better-sqlite3';
import type { Db } from '../../db/client.js';
import type { AccessRow, UsageReader } from '../reader.js';

/**
 * The usage reads on a SQLite file, as prepared statements on a read-only connection of their
 * own. Lists travel as one JSON parameter (`IN (SELECT value FROM json_each(?))`), so each
 * statement is prepared once whatever the list's length.
 *
 * Prisma keeps DateTime columns as ISO 8601 text with `+00:00` (the driver adapter's format), and
 * this connection reads integers as bigint.
 */

/** How long a read waits on a lock (only WAL recovery or a checkpoint restart take one). */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * The file of the SQLite database behind a Prisma client; undefined when it lives in memory, or
 * is not SQLite at all (PostgreSQL refuses the PRAGMA).
 */
export async function sqliteFileOf(db: Db): Promise<string | undefined> {
  const databases = await db.$queryRawUnsafe<{ name: string; file: string }[]>('PRAGMA database_list').catch(() => []);
  return databases.find((d) => d.name === 'main')?.file || undefined;
}

/** A DateTime value as Prisma stores it in SQLite. */
export function sqliteTimestamp(date: Date): string {
  return date.toISOString().replace('Z', '+00:00');
}

type Row = Record<string, unknown>;

export function sqliteReader(file: string): UsageReader {
  const connection = new Database(file, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  connection.defaultSafeIntegers(true);
  const statement = (sql: string) => connection.prepare<unknown[], Row>(sql);
  const list = (values: readonly string[]) => JSON.stringify(values);

  const servicesNamed = statement('SELECT "id", "sellerId" FROM "Service" WHERE "organizationId" = ? AND "slug" = ?');
  const callPayment = statement(
    `SELECT "id", "status", "serviceId", "planId", "usageJson" FROM "PaymentAttempt"
     WHERE "requestId" = ? AND "organizationId" = ? AND "kind" = 'call' AND "status" IN (SELECT value FROM json_each(?))
     ORDER BY "createdAt" DESC, "id" DESC LIMIT 1`,
  );
  const request = statement(
    `SELECT r."sellerId", r."serviceId", r."agentId", r."buyerId", r."mode",
            a."id" AS "agentFound", a."buyerId" AS "agentBuyerId", a."claimedAt" AS "agentClaimedAt", b."emailVerifiedAt" AS "ownerEmailVerifiedAt"
     FROM "RequestRecord" r LEFT JOIN "Agent" a ON a."id" = r."agentId" LEFT JOIN "Buyer" b ON b."id" = a."buyerId"
     WHERE r."id" = ?`,
  );
  const paygPlan = statement(
    `SELECT "id", "interval" FROM "Plan" WHERE "serviceId" = ? AND "billingMode" = 'payg' ORDER BY "createdAt", "id" LIMIT 1`,
  );
  // The unary `+` keeps SQLite off the seller's index: a seller has thousands of accesses, an
  // agent or a buyer a handful, and without statistics the planner cannot tell.
  const accesses = statement(
    `SELECT a."id", a."agentId", a."planId", a."status", a."periodStart", a."periodEnd", a."creditGrantedMicros", a."balanceMicros"
     FROM "Access" a JOIN "Plan" p ON p."id" = a."planId"
     WHERE (a."agentId" = ? OR a."buyerId" = ?) AND +a."sellerId" = ? AND p."serviceId" = ?
     ORDER BY a."createdAt", a."id"`,
  );
  const meters = statement('SELECT "id", "key" FROM "Meter" WHERE "serviceId" = ? AND "key" IN (SELECT value FROM json_each(?))');
  const prices = statement(
    `SELECT "planId", "meterId", "priceMicros", "unitSize", "includedUnits", "defaultMaxQuantity" FROM "PlanMeterPrice"
     WHERE "planId" IN (SELECT value FROM json_each(?)) AND "meterId" IN (SELECT value FROM json_each(?))`,
  );
  const accessUsage = statement(
    `SELECT "accessId", "meterId", "periodStart", "unitsUsed" FROM "AccessMeterUsage"
     WHERE "accessId" IN (SELECT value FROM json_each(?)) AND "meterId" IN (SELECT value FROM json_each(?)) AND "periodStart" IN (SELECT value FROM json_each(?))`,
  );
  const freePoolUsage = statement(
    `SELECT "meterId", "unitsUsed" FROM "IncludedUnitsUsage" WHERE "buyerId" = ? AND "periodStart" = ? AND "meterId" IN (SELECT value FROM json_each(?))`,
  );
  const usageEvent = statement(
    'SELECT "id", "bodyDigest", "costMicros" FROM "UsageEvent" WHERE "organizationId" = ? AND "idempotencyKey" = ?',
  );

  return {
    servicesNamed: async (organizationId, slug) =>
      servicesNamed.all(organizationId, slug).map((r) => ({ id: text(r.id), sellerId: text(r.sellerId) })),

    callPayment: async (organizationId, requestId, statuses) => {
      const r = callPayment.get(requestId, organizationId, list(statuses));
      return (
        r && {
          id: text(r.id),
          status: text(r.status),
          serviceId: optionalText(r.serviceId),
          planId: optionalText(r.planId),
          usageJson: text(r.usageJson),
        }
      );
    },

    request: async (requestId) => {
      const r = request.get(requestId);
      if (!r) return undefined;
      return {
        sellerId: text(r.sellerId),
        serviceId: optionalText(r.serviceId),
        agentId: optionalText(r.agentId),
        buyerId: optionalText(r.buyerId),
        mode: text(r.mode),
        agent:
          r.agentFound === null
            ? null
            : {
                buyerId: optionalText(r.agentBuyerId),
                claimed: r.agentClaimedAt !== null,
                ownerEmailVerified: r.ownerEmailVerifiedAt !== null,
              },
      };
    },

    paygPlan: async (serviceId) => {
      const r = paygPlan.get(serviceId);
      return r && { id: text(r.id), interval: text(r.interval) };
    },

    accesses: async (service, agentId, ownerId) => accesses.all(agentId, ownerId, service.sellerId, service.id).map(accessRow),

    meters: async (serviceId, keys) => new Map(meters.all(serviceId, list(keys)).map((r) => [text(r.key), text(r.id)])),

    prices: async (planIds, meterIds) =>
      prices.all(list(planIds), list(meterIds)).map((r) => ({
        planId: text(r.planId),
        meterId: text(r.meterId),
        priceMicros: r.priceMicros as bigint,
        unitSize: r.unitSize as bigint,
        includedUnits: r.includedUnits as bigint,
        defaultMaxQuantity: r.defaultMaxQuantity === null ? null : (r.defaultMaxQuantity as bigint),
      })),

    accessUsage: async (accessIds, meterIds, periodStarts) =>
      accessUsage.all(list(accessIds), list(meterIds), list(periodStarts.map(sqliteTimestamp))).map((r) => ({
        accessId: text(r.accessId),
        meterId: text(r.meterId),
        periodStart: date(r.periodStart)!,
        unitsUsed: r.unitsUsed as bigint,
      })),

    freePoolUsage: async (buyerId, periodStart, meterIds) =>
      freePoolUsage
        .all(buyerId, sqliteTimestamp(periodStart), list(meterIds))
        .map((r) => ({ meterId: text(r.meterId), unitsUsed: r.unitsUsed as bigint })),

    usageEvent: async (organizationId, idempotencyKey) => {
      const r = usageEvent.get(organizationId, idempotencyKey);
      return r && { id: text(r.id), bodyDigest: text(r.bodyDigest), costMicros: r.costMicros as bigint };
    },
  };
}

function accessRow(r: Row): AccessRow {
  return {
    id: text(r.id),
    agentId: text(r.agentId),
    planId: text(r.planId),
    status: text(r.status),
    periodStart: date(r.periodStart),
    periodEnd: date(r.periodEnd),
    creditGrantedMicros: r.creditGrantedMicros === null ? null : (r.creditGrantedMicros as bigint),
    balanceMicros: r.balanceMicros as bigint,
  };
}

const text = (value: unknown) => String(value);
const optionalText = (value: unknown) => (value === null || value === undefined ? null : String(value));

/** ISO 8601 text as Prisma writes it; SQLite's own `CURRENT_TIMESTAMP` form is UTC too. */
function date(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint' || typeof value === 'number') return new Date(Number(value));
  const text = String(value);
  return new Date(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$/.test(text) ? `${text.replace(' ', 'T')}Z` : text);
}
