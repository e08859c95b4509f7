import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { Batches } from '../db/batches.js';
import type { Db } from '../db/client.js';
import { bigintOf, bigintOrNull, booleanOf, dateOf, dateOrNull, inList, inPairs, type ReadSql, readSqlOf } from '../db/sql.js';
import { CLAIMED_STATUSES } from '../payments/attempt-status.js';
import { appliedBalance, appliedPeriodEnd } from './as-applied.js';
import type { PriceTerms } from './pricing.js';

/**
 * Everything the usage endpoints read, as one text of each statement for both databases, on the
 * database's read lane (db/sql.ts › readSqlOf: a read-only connection of its own on a SQLite
 * file, prepared statements on PostgreSQL's pool). It sees committed data only. Writes go
 * through the database's own lane (draw.ts).
 *
 * A check is one statement (`lookup`) when the seller's catalog is in memory (catalog.ts): on
 * PostgreSQL every statement is a round trip and most of a check's cost, so the reads that a
 * check makes of what changes per call are asked together.
 */
export interface UsageReader {
  /**
   * At once: the services of the organization with this slug (one per seller at most); for the
   * request, its newest per-call payment in one of `CLAIMED_STATUSES` (payments/attempt-status.ts), its record, and
   * the accesses that its agent, or the agent's buyer, holds on plans of those services; the usage
   * event recorded under `idempotencyKey`. A null `requestId` or key looks up no request or event.
   */
  lookup(organizationId: string, serviceSlug: string, requestId: string | null, idempotencyKey: string | null): Promise<Lookup>;
  /** Meters, prices and pay-as-you-go plans of the seller's services (catalog.ts keeps them). */
  catalogRows(sellerId: string): Promise<CatalogRows>;
  /**
   * Included units drawn from accesses, for their periods: per meter, and (with a null meter) from
   * the plan's credit units.
   */
  accessUsage(accessIds: readonly string[], meterIds: readonly string[], periodStarts: readonly Date[]): Promise<AccessUsageRow[]>;
  /** Included units drawn from a buyer's free pool in one period. */
  freePoolUsage(buyerId: string, periodStart: Date, meterIds: readonly string[]): Promise<{ meterId: string; unitsUsed: bigint }[]>;
}

export type Lookup = {
  services: ServiceRow[];
  payment: PaymentRow | undefined;
  request: RequestRow | undefined;
  /** Oldest first; not yet narrowed to one service, or to the owner the request names (resolve.ts). */
  accesses: AccessCandidate[];
  event: { id: string; bodyDigest: string; costMicros: bigint } | undefined;
};

/** `version`: when the seller (and so its catalog) last changed, in ms (catalog.ts). */
export type ServiceRow = { id: string; sellerId: string; version: number };
export type PaymentRow = { id: string; status: string; serviceId: string | null; planId: string | null; usageJson: string };
export type RequestRow = {
  sellerId: string;
  serviceId: string | null;
  agentId: string | null;
  buyerId: string | null;
  mode: string;
  /** Null when the request has no agent (or the agent is gone). */
  agent: { buyerId: string | null; claimed: boolean; ownerEmailVerified: boolean } | null;
};
export type AccessRow = {
  id: string;
  agentId: string;
  planId: string;
  status: string;
  periodStart: Date | null;
  periodEnd: Date | null;
  creditGrantedMicros: bigint | null;
  balanceMicros: bigint;
};
export type AccessCandidate = AccessRow & { buyerId: string | null; sellerId: string; serviceId: string };
export type PriceRow = PriceTerms & { planId: string; meterId: string; defaultMaxQuantity: bigint | null };
/** `meterId` null: the units drawn from the access's credit units. */
export type AccessUsageRow = { accessId: string; meterId: string | null; periodStart: Date; unitsUsed: bigint };
export type CatalogRows = {
  meters: { id: string; serviceId: string; key: string }[];
  prices: PriceRow[];
  /** Oldest first. */
  paygPlans: { id: string; serviceId: string; interval: string }[];
  creditUnitPlans: { id: string; includedCreditUnits: bigint }[];
};

const readers = new WeakMap<Db, UsageReader>();

/** The reader of a database, made once per client. */
export function usageReader(db: Db): UsageReader {
  let reader = readers.get(db);
  if (!reader) {
    reader = sqlReader(readSqlOf(db));
    readers.set(db, reader);
  }
  return reader;
}

/**
 * One row shape for every part of the lookup, so the parts can be one `UNION ALL`: text columns
 * `s1`…`s6`, timestamps `t1`…`t3`, integers `n1`, `n2`, each part naming what it puts where. Each
 * column holds one type in every part, as PostgreSQL requires.
 */
type LookupRow = {
  kind: 'service' | 'payment' | 'request' | 'access' | 'event';
  id: string;
  s1: string | null;
  s2: string | null;
  s3: string | null;
  s4: string | null;
  s5: string | null;
  s6: string | null;
  t1: unknown;
  t2: unknown;
  t3: unknown;
  n1: unknown;
  n2: unknown;
  k1: string | null;
  k2: string | null;
  k3: string | null;
};

// The statuses that claim a request are part of the lookup's text, as literals: one text whatever the call.
const claimed = Prisma.join(CLAIMED_STATUSES.map((status) => Prisma.raw(`'${status}'`)));

type LookupKey = { o: string; s: string; r: string | null; k: string | null };

/**
 * The lookups of several calls in one statement. Each part finds its rows by lists of the keys'
 * values on an indexed column (the lists are one parameter each, see db/sql.ts › inList), so the
 * plan is index lookups whatever the tables' sizes, and returns the values it matched in `k1`
 * (organization), `k2` (slug or idempotency key) and `k3` (request): the rows are sorted to their
 * lookups here, and a row that matched only a mix of two lookups' values is dropped.
 */
function lookupStatement(provider: ReadSql['provider'], keys: readonly LookupKey[]) {
  const list = (values: (string | null)[]) => inList(provider, [...new Set(values.filter((v): v is string => v !== null))]);
  const orgs = list(keys.map((key) => key.o));
  const slugs = list(keys.map((key) => key.s));
  const requests = list(keys.map((key) => key.r));
  const events = inPairs(
    provider,
    keys.flatMap((key) => (key.k === null ? [] : [[key.o, key.k] as const])),
  );
  // The accesses' part joins in the order written (CROSS JOIN fixes SQLite's order; PostgreSQL
  // plans from statistics): from the requests to their agents, to the agents' or their buyers'
  // few accesses by their own indexes, and only then to plans and services. Started from the
  // service's side it would read every access on the plan. It comes first because its columns
  // give every column its type: PostgreSQL types a UNION's columns pair by pair, from the left.
  // Payments come oldest first, as accesses do; the newest is the last of its lookup. An account
  // a stateful seller has not taken yet reads as not active: nothing is drawn on it before the
  // seller has it, nor what a change the seller has not applied yet added: its credit, a later
  // period end (docs/decisions.md › Held purchases).
  return Prisma.sql`
    SELECT 'access' AS "kind", a."id" AS "id", a."agentId" AS "s1", a."planId" AS "s2",
           CASE WHEN a."provisioningState" = 'active' THEN a."status" ELSE 'provisioning' END AS "s3",
           a."buyerId" AS "s4", a."sellerId" AS "s5", pl."serviceId" AS "s6", a."periodStart" AS "t1",
           ${appliedPeriodEnd('a')} AS "t2",
           a."createdAt" AS "t3", a."creditGrantedMicros" AS "n1", ${appliedBalance('a')} AS "n2",
           s."organizationId" AS "k1", s."slug" AS "k2", r."id" AS "k3"
    FROM "RequestRecord" r CROSS JOIN "Agent" ag CROSS JOIN "Access" a CROSS JOIN "Plan" pl CROSS JOIN "Service" s
    WHERE r."id" ${requests} AND ag."id" = r."agentId" AND (a."agentId" = ag."id" OR a."buyerId" = ag."buyerId")
      AND pl."id" = a."planId" AND s."id" = pl."serviceId" AND s."organizationId" ${orgs} AND s."slug" ${slugs}
    UNION ALL
    SELECT 'service', s."id", s."sellerId", NULL, NULL, NULL, NULL, NULL, seller."updatedAt", NULL, NULL, NULL, NULL,
           s."organizationId", s."slug", NULL
    FROM "Service" s CROSS JOIN "Seller" seller
    WHERE s."organizationId" ${orgs} AND s."slug" ${slugs} AND seller."id" = s."sellerId"
    UNION ALL
    SELECT 'payment', p."id", p."status", p."serviceId", p."planId", p."usageJson", NULL, NULL, NULL, NULL, p."createdAt", NULL, NULL,
           p."organizationId", NULL, p."requestId"
    FROM "PaymentAttempt" p
    WHERE p."requestId" ${requests} AND p."organizationId" ${orgs} AND p."kind" = 'call' AND p."status" IN (${claimed})
    UNION ALL
    SELECT 'request', r."id", r."sellerId", r."serviceId", r."agentId", r."buyerId", r."mode", ag."buyerId",
           ag."claimedAt", b."emailVerifiedAt", NULL, CASE WHEN ag."id" IS NULL THEN 0 ELSE 1 END, NULL, NULL, NULL, r."id"
    FROM "RequestRecord" r LEFT JOIN "Agent" ag ON ag."id" = r."agentId" LEFT JOIN "Buyer" b ON b."id" = ag."buyerId"
    WHERE r."id" ${requests}
    UNION ALL
    SELECT 'event', u."id", u."bodyDigest", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, u."costMicros", NULL,
           u."organizationId", u."idempotencyKey", NULL
    FROM "UsageEvent" u WHERE (u."organizationId", u."idempotencyKey") ${events}
    ORDER BY "kind", "t3", "id"`;
}

/** Which lookup a row answers, as the values it matched. */
function rowKey(r: LookupRow): string {
  if (r.kind === 'service') return JSON.stringify([r.kind, r.k1, r.k2]);
  if (r.kind === 'payment') return JSON.stringify([r.kind, r.k1, r.k3]);
  if (r.kind === 'request') return JSON.stringify([r.kind, r.k3]);
  if (r.kind === 'access') return JSON.stringify([r.kind, r.k1, r.k2, r.k3]);
  return JSON.stringify([r.kind, r.k1, r.k2]);
}

/** The rows of each kind a lookup is answered by, keyed as `rowKey` keys them. */
function lookupKeys(key: LookupKey): [LookupRow['kind'], string | undefined][] {
  const joined = (...parts: (string | null)[]) => (parts.includes(null) ? undefined : JSON.stringify(parts));
  return [
    ['service', joined('service', key.o, key.s)],
    ['payment', joined('payment', key.o, key.r)],
    ['request', joined('request', key.r)],
    ['access', joined('access', key.o, key.s, key.r)],
    ['event', joined('event', key.o, key.k)],
  ];
}

/** At most this many lookups share a statement. */
const MAX_BATCH = 64;
/** Statements of lookups in flight at once: one being answered while the next is gathered. */
const MAX_IN_FLIGHT = 2;

/**
 * Lookups that arrive together share one statement (db/batches.ts), as writes share a commit
 * (group-commit.ts): on PostgreSQL a statement's round trip, its system calls and the server's
 * start and end of a statement cost more than the lookup itself. A lookup at fault (a string
 * PostgreSQL refuses, say) fails alone.
 */
const lookupBatches = (run: (keys: readonly LookupKey[]) => Promise<Lookup[]>) =>
  new Batches(run, { maxBatch: MAX_BATCH, maxInFlight: MAX_IN_FLIGHT });

export function sqlReader(sql: ReadSql): UsageReader {
  const list = (values: readonly string[]) => inList(sql.provider, values);
  const batches = lookupBatches(async (keys) => {
    const rows = new Map<string, LookupRow[]>();
    for (const r of await sql.all<LookupRow>(lookupStatement(sql.provider, keys))) {
      const key = rowKey(r);
      const same = rows.get(key);
      if (same) same.push(r);
      else rows.set(key, [r]);
    }
    return keys.map((key) => {
      const found: Lookup = { services: [], payment: undefined, request: undefined, accesses: [], event: undefined };
      for (const [, rowsKey] of lookupKeys(key))
        for (const r of rowsKey === undefined ? [] : (rows.get(rowsKey) ?? [])) readLookupRow(found, r);
      return found;
    });
  });

  return {
    lookup: (organizationId, serviceSlug, requestId, idempotencyKey) =>
      batches.add({ o: organizationId, s: serviceSlug, r: requestId, k: idempotencyKey }),

    async catalogRows(sellerId) {
      // From the seller's services outwards: the read pool joins in the order written.
      const [meters, prices, paygPlans, creditUnitPlans] = await Promise.all([
        sql.all<{ id: string; serviceId: string; key: string }>(Prisma.sql`
          SELECT m."id", m."serviceId", m."key" FROM "Service" s JOIN "Meter" m ON m."serviceId" = s."id" WHERE s."sellerId" = ${sellerId}`),
        sql.all<Record<string, unknown>>(Prisma.sql`
          SELECT pr."planId", pr."meterId", pr."priceMicros", pr."unitSize", pr."includedUnits", pr."defaultMaxQuantity"
          FROM "Service" s JOIN "Plan" pl ON pl."serviceId" = s."id" JOIN "PlanMeterPrice" pr ON pr."planId" = pl."id"
          WHERE s."sellerId" = ${sellerId}`),
        sql.all<{ id: string; serviceId: string; interval: string }>(Prisma.sql`
          SELECT pl."id", pl."serviceId", pl."interval" FROM "Service" s JOIN "Plan" pl ON pl."serviceId" = s."id"
          WHERE s."sellerId" = ${sellerId} AND pl."billingMode" = 'payg' ORDER BY pl."createdAt", pl."id"`),
        sql.all<{ id: string; includedCreditUnits: unknown }>(Prisma.sql`
          SELECT pl."id", pl."includedCreditUnits" FROM "Service" s JOIN "Plan" pl ON pl."serviceId" = s."id"
          WHERE s."sellerId" = ${sellerId} AND pl."includedCreditUnits" > 0`),
      ]);
      return {
        meters,
        prices: prices.map((r) => ({
          planId: String(r.planId),
          meterId: String(r.meterId),
          priceMicros: bigintOf(r.priceMicros),
          unitSize: bigintOf(r.unitSize),
          includedUnits: bigintOf(r.includedUnits),
          defaultMaxQuantity: bigintOrNull(r.defaultMaxQuantity),
        })),
        paygPlans,
        creditUnitPlans: creditUnitPlans.map((r) => ({ id: r.id, includedCreditUnits: bigintOf(r.includedCreditUnits) })),
      };
    },

    async accessUsage(accessIds, meterIds, periodStarts) {
      const rows = await sql.all<Record<string, unknown>>(Prisma.sql`
        SELECT "accessId", "meterId", "periodStart", "unitsUsed" FROM "AccessMeterUsage"
        WHERE "accessId" ${list(accessIds)} AND "meterId" ${list(meterIds)} AND "periodStart" IN (${Prisma.join(periodStarts)})
        UNION ALL
        SELECT "accessId", NULL, "periodStart", "unitsUsed" FROM "AccessCreditUnitsUsage"
        WHERE "accessId" ${list(accessIds)} AND "periodStart" IN (${Prisma.join(periodStarts)})`);
      return rows.map((r) => ({
        accessId: String(r.accessId),
        meterId: r.meterId === null ? null : String(r.meterId),
        periodStart: dateOf(r.periodStart),
        unitsUsed: bigintOf(r.unitsUsed),
      }));
    },

    async freePoolUsage(buyerId, periodStart, meterIds) {
      const rows = await sql.all<{ meterId: string; unitsUsed: unknown }>(Prisma.sql`
        SELECT "meterId", "unitsUsed" FROM "IncludedUnitsUsage" WHERE "buyerId" = ${buyerId} AND "periodStart" = ${periodStart} AND "meterId" ${list(meterIds)}`);
      return rows.map((r) => ({ meterId: r.meterId, unitsUsed: bigintOf(r.unitsUsed) }));
    },
  };
}

/** Adds a row of the lookup to what was found for its key. */
function readLookupRow(found: Lookup, r: LookupRow): void {
  if (r.kind === 'service') found.services.push({ id: r.id, sellerId: r.s1!, version: dateOf(r.t1).getTime() });
  // Oldest first: the last one is the newest.
  else if (r.kind === 'payment') found.payment = { id: r.id, status: r.s1!, serviceId: r.s2, planId: r.s3, usageJson: r.s4! };
  else if (r.kind === 'request')
    found.request = {
      sellerId: r.s1!,
      serviceId: r.s2,
      agentId: r.s3,
      buyerId: r.s4,
      mode: r.s5!,
      agent: booleanOf(r.n1) ? { buyerId: r.s6, claimed: r.t1 !== null, ownerEmailVerified: r.t2 !== null } : null,
    };
  else if (r.kind === 'access')
    found.accesses.push({
      id: r.id,
      agentId: r.s1!,
      planId: r.s2!,
      status: r.s3!,
      buyerId: r.s4,
      sellerId: r.s5!,
      serviceId: r.s6!,
      periodStart: dateOrNull(r.t1),
      periodEnd: dateOrNull(r.t2),
      creditGrantedMicros: bigintOrNull(r.n1),
      balanceMicros: bigintOf(r.n2),
    });
  else found.event = { id: r.id, bodyDigest: r.s1!, costMicros: bigintOf(r.n1) };
}
