import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { newId } from '../../shared/ids.js';
import type { Db, Provider } from '../db/client.js';
import { violatedConstraint } from '../db/constraints.js';
import { bigintOf, bigintOrNull, dateOrNull, inList, type Sql, sqlOf } from '../db/sql.js';
import { holdOpenForReports } from '../payments/attempt-status.js';
import { accessState, type Draw, type DrawItem } from './allowance.js';
import { appliedBalance, appliedPeriodEnd } from './as-applied.js';
import { groupCommit } from './group-commit.js';
import { accessPeriodStart } from './periods.js';
import { affordable, type Bill, bill } from './pricing.js';

/**
 * Commits one draw and its usage event in a single transaction: all of it or none of it, and a
 * duplicate idempotency key (unique per organization) rolls the whole draw back.
 *
 * Two ways, both on the SQL lane (db/sql.ts) and safe under concurrency on either database:
 *
 * * Included units (and a plan's credit units) are counted against what is left of them, so a
 *   draw that takes any runs in a transaction of its own that first writes to the row guarding
 *   the count (the access; the buyer's pool rows, in meter order). A write takes PostgreSQL's row lock until commit, and
 *   SQLite runs one write transaction at a time, so concurrent draws queue up and each prices
 *   what the one before it left.
 * * Everything else (a paid request, or credit alone) is one batch of statements: the credit is
 *   taken by an update that sets the balance to NULL, which the column refuses, unless the access
 *   is active and can pay, so a balance never goes below zero and a refused debit aborts the
 *   batch. A batch costs half a transaction of its own, and batches that arrive together
 *   commit together (group-commit.ts). It is the common case: included units are the first few
 *   units of a period.
 */

export type UsageEventInput = {
  organizationId: string;
  idempotencyKey: string;
  bodyDigest: string;
  requestId: string;
  serviceId: string;
  source: 'report' | 'header';
};

/** The draw no longer fits (another draw took the units or credit first, or the access changed). */
export class DrawNoLongerFits extends Error {
  override name = 'DrawNoLongerFits';
}

/** The request's payment started settling after the report was resolved: nothing was recorded. */
export class PaymentClosed extends Error {
  override name = 'PaymentClosed';
}

type PricedItems = Bill<DrawItem>['items'];

export async function commitDraw(db: Db, draw: Draw, event: UsageEventInput, now: Date): Promise<{ id: string; costMicros: bigint }> {
  const priced = bill(draw.items, draw.kind === 'access' ? draw.pool : undefined);
  const takesIncludedUnits = priced.creditUnits > 0n || priced.items.some((item) => item.includedUnits > 0n);
  return draw.kind === 'free' || takesIncludedUnits ? commitLocked(db, draw, event, now) : commitBatch(db, draw, priced, event, now);
}

async function commitBatch(db: Db, draw: Draw, priced: Bill<DrawItem>, event: UsageEventInput, now: Date) {
  const id = newId('usageEvent');
  const debit = draw.kind === 'access' && priced.costMicros > 0n ? { accessId: draw.access.id, micros: priced.costMicros } : undefined;
  const payment = draw.kind === 'payment' ? draw.paymentAttemptId : undefined;
  try {
    await groupCommit(db, batchStatements).commit({
      event: eventRow(id, draw, priced, event, now),
      items: itemRows(id, priced),
      debit,
      payment,
    });
  } catch (err) {
    if (violatedConstraint(err) === 'not_null') throw payment ? new PaymentClosed() : new DrawNoLongerFits();
    throw err;
  }
  return { id, costMicros: priced.costMicros };
}

async function commitLocked(db: Db, draw: Draw, event: UsageEventInput, now: Date) {
  const lane = sqlOf(db);
  return lane.transaction(async (tx) => {
    const priced =
      draw.kind === 'access'
        ? await drawFromAccess(tx, lane.provider, draw, now)
        : draw.kind === 'free'
          ? await drawFromFreePool(tx, draw, now)
          : bill(draw.items);
    const id = newId('usageEvent');
    await tx.run(insertEvents([eventRow(id, draw, priced, event, now)]));
    if (priced.items.length) await tx.run(insertItems(itemRows(id, priced)));
    return { id, costMicros: priced.costMicros };
  });
}

type EventRow = UsageEventInput & {
  id: string;
  accessId: string | null;
  paymentAttemptId: string | null;
  costMicros: bigint;
  createdAt: Date;
};
type ItemRow = {
  id: string;
  usageEventId: string;
  meterId: string;
  quantity: bigint;
  includedUnits: bigint;
  creditUnits: bigint;
  costMicros: bigint;
};
type BatchWrite = {
  event: EventRow;
  items: ItemRow[];
  debit: { accessId: string; micros: bigint } | undefined;
  /** The payment attempt a paid request's usage is recorded against. */
  payment: string | undefined;
};

function eventRow(id: string, draw: Draw, priced: Bill<DrawItem>, event: UsageEventInput, now: Date): EventRow {
  return {
    id,
    ...event,
    accessId: draw.kind === 'access' ? draw.access.id : null,
    paymentAttemptId: draw.kind === 'payment' ? draw.paymentAttemptId : null,
    costMicros: priced.costMicros,
    createdAt: now,
  };
}

function itemRows(usageEventId: string, priced: Bill<DrawItem>): ItemRow[] {
  return priced.items.map((item) => ({
    id: newId('usageEventItem'),
    usageEventId,
    meterId: item.meterId,
    quantity: item.quantity,
    includedUnits: item.includedUnits,
    creditUnits: item.creditUnits,
    costMicros: item.costMicros,
  }));
}

/**
 * A group of batch writes as at most four statements: the debits (summed per access, so the
 * guard holds for the group as a whole), the payments' guard, the events and the items.
 */
function batchStatements(writes: readonly BatchWrite[]): Prisma.Sql[] {
  const debits = new Map<string, bigint>();
  for (const { debit } of writes) if (debit) debits.set(debit.accessId, (debits.get(debit.accessId) ?? 0n) + debit.micros);
  const payments = [...new Set(writes.flatMap((write) => (write.payment ? [write.payment] : [])))];
  const items = writes.flatMap((write) => write.items);
  return [
    ...(debits.size ? [debitAccesses(debits, writes[0]!.event.createdAt)] : []),
    // Refuses the group if one of its payments started settling since the report was resolved.
    ...(payments.length ? [holdOpenForReports(payments)] : []),
    insertEvents(writes.map((write) => write.event)),
    ...(items.length ? [insertItems(items)] : []),
  ];
}

/**
 * Takes credit from accesses. A balance becomes NULL, which its column refuses (aborting the
 * transaction), unless the access is active and can pay from credit the seller has: no balance
 * ever goes below zero, nor below what a write not applied yet added.
 */
function debitAccesses(debits: Map<string, bigint>, now: Date) {
  const cases = [...debits].map(
    ([accessId, micros]) =>
      Prisma.sql`WHEN ${accessId} THEN (CASE WHEN "status" = 'active' AND "balanceMicros" - "unappliedCreditMicros" >= ${micros} THEN "balanceMicros" - ${micros} ELSE NULL END)`,
  );
  return Prisma.sql`
    UPDATE "Access" SET "balanceMicros" = CASE "id" ${Prisma.join(cases, ' ')} END, "updatedAt" = ${now}
    WHERE "id" IN (${Prisma.join([...debits.keys()])})`;
}

function insertEvents(rows: readonly EventRow[]) {
  const values = rows.map(
    (e) =>
      Prisma.sql`(${e.id}, ${e.organizationId}, ${e.idempotencyKey}, ${e.bodyDigest}, ${e.requestId}, ${e.serviceId}, ${e.accessId}, ${e.paymentAttemptId}, ${e.source}, ${e.costMicros}, ${e.createdAt})`,
  );
  return Prisma.sql`
    INSERT INTO "UsageEvent" ("id", "organizationId", "idempotencyKey", "bodyDigest", "requestId", "serviceId", "accessId", "paymentAttemptId", "source", "costMicros", "createdAt")
    VALUES ${Prisma.join(values)}`;
}

function insertItems(rows: readonly ItemRow[]) {
  const values = rows.map(
    (i) => Prisma.sql`(${i.id}, ${i.usageEventId}, ${i.meterId}, ${i.quantity}, ${i.includedUnits}, ${i.creditUnits}, ${i.costMicros})`,
  );
  return Prisma.sql`INSERT INTO "UsageEventItem" ("id", "usageEventId", "meterId", "quantity", "includedUnits", "creditUnits", "costMicros") VALUES ${Prisma.join(values)}`;
}

async function drawFromAccess(tx: Sql, provider: Provider, draw: Extract<Draw, { kind: 'access' }>, now: Date): Promise<Bill<DrawItem>> {
  // The guarding write: it locks the access and reads it back as it is now.
  const row = await tx.get<Record<string, unknown>>(Prisma.sql`
    UPDATE "Access" SET "updatedAt" = ${now} WHERE "id" = ${draw.access.id}
    RETURNING "status", "periodStart", ${appliedPeriodEnd()} AS "periodEnd", "creditGrantedMicros", ${appliedBalance()} AS "balanceMicros"`);
  // Priced from a row just read, so gone only if its seller was deleted since: a failure, as it was for the ORM.
  if (!row) throw new Error(`The access ${draw.access.id} to draw on no longer exists.`);
  // As the reader sees it: what the seller has not applied yet is not drawn on (as-applied.ts).
  const access = {
    status: String(row.status),
    periodStart: dateOrNull(row.periodStart),
    periodEnd: dateOrNull(row.periodEnd),
    creditGrantedMicros: bigintOrNull(row.creditGrantedMicros),
    balanceMicros: bigintOf(row.balanceMicros),
  };
  // Canceled, expired or renewed since it was priced: the caller tries its next draw.
  if (accessState(access, now) || accessPeriodStart(access).getTime() !== draw.periodStart.getTime()) throw new DrawNoLongerFits();
  const rows = await tx.all<{ meterId: string; unitsUsed: unknown }>(Prisma.sql`
    SELECT "meterId", "unitsUsed" FROM "AccessMeterUsage"
    WHERE "accessId" = ${draw.access.id} AND "periodStart" = ${draw.periodStart} AND "meterId" ${inList(
      provider,
      draw.items.map((item) => item.meterId),
    )}`);
  const used = new Map(rows.map((row) => [row.meterId, bigintOf(row.unitsUsed)]));
  const pool = draw.pool && { granted: draw.pool.granted, used: await creditUnitsUsed(tx, draw.access.id, draw.periodStart) };
  const priced = bill(
    draw.items.map((item) => ({ ...item, includedUsed: used.get(item.meterId) ?? 0n })),
    pool,
  );
  if (!affordable(priced, access.creditGrantedMicros === null ? null : access.balanceMicros)) throw new DrawNoLongerFits();

  await countIncludedUnits(tx, 'AccessMeterUsage', ['accessId', draw.access.id], draw.periodStart, priced.items, now);
  if (priced.creditUnits > 0n) await countCreditUnits(tx, draw.access.id, draw.periodStart, priced.creditUnits, now);
  if (priced.costMicros > 0n) {
    const paid = await tx.run(Prisma.sql`
      UPDATE "Access" SET "balanceMicros" = "balanceMicros" - ${priced.costMicros}, "updatedAt" = ${now}
      WHERE "id" = ${draw.access.id} AND "balanceMicros" - "unappliedCreditMicros" >= ${priced.costMicros}`);
    if (paid !== 1) throw new DrawNoLongerFits();
  }
  return priced;
}

/** Units drawn from the access's credit units in the period; read under the access's lock. */
async function creditUnitsUsed(tx: Sql, accessId: string, periodStart: Date): Promise<bigint> {
  const row = await tx.get<{ unitsUsed: unknown }>(Prisma.sql`
    SELECT "unitsUsed" FROM "AccessCreditUnitsUsage" WHERE "accessId" = ${accessId} AND "periodStart" = ${periodStart}`);
  return row ? bigintOf(row.unitsUsed) : 0n;
}

async function countCreditUnits(tx: Sql, accessId: string, periodStart: Date, units: bigint, now: Date): Promise<void> {
  await tx.run(Prisma.sql`
    INSERT INTO "AccessCreditUnitsUsage" ("accessId", "periodStart", "unitsUsed", "updatedAt") VALUES (${accessId}, ${periodStart}, ${units}, ${now})
    ON CONFLICT ("accessId", "periodStart")
    DO UPDATE SET "unitsUsed" = "AccessCreditUnitsUsage"."unitsUsed" + excluded."unitsUsed", "updatedAt" = excluded."updatedAt"`);
}

async function drawFromFreePool(tx: Sql, draw: Extract<Draw, { kind: 'free' }>, now: Date): Promise<Bill<DrawItem>> {
  // The guarding writes: one row per meter of the buyer's pool, created at zero when new, in
  // meter order so two draws never wait on each other crosswise.
  const used = new Map<string, bigint>();
  for (const item of [...draw.items].sort((a, b) => (a.meterId < b.meterId ? -1 : 1))) {
    const row = await tx.get<{ unitsUsed: unknown }>(Prisma.sql`
      INSERT INTO "IncludedUnitsUsage" ("buyerId", "meterId", "periodStart", "unitsUsed", "updatedAt")
      VALUES (${draw.buyerId}, ${item.meterId}, ${draw.periodStart}, 0, ${now})
      ON CONFLICT ("buyerId", "meterId", "periodStart") DO UPDATE SET "updatedAt" = excluded."updatedAt"
      RETURNING "unitsUsed"`);
    used.set(item.meterId, bigintOf(row!.unitsUsed));
  }
  const priced = bill(draw.items.map((item) => ({ ...item, includedUsed: used.get(item.meterId) ?? 0n })));
  if (!affordable(priced, null)) throw new DrawNoLongerFits();

  await countIncludedUnits(tx, 'IncludedUnitsUsage', ['buyerId', draw.buyerId], draw.periodStart, priced.items, now);
  return priced;
}

/**
 * Adds the included units an access's or a buyer's draw took to their counts for the period, one
 * row per meter (made by the first draw of the period), in one statement.
 */
async function countIncludedUnits(
  tx: Sql,
  table: 'AccessMeterUsage' | 'IncludedUnitsUsage',
  [ownerColumn, ownerId]: ['accessId' | 'buyerId', string],
  periodStart: Date,
  items: PricedItems,
  now: Date,
): Promise<void> {
  const drawn = items.filter((item) => item.includedUnits > 0n);
  if (drawn.length === 0) return;
  const values = drawn.map((item) => Prisma.sql`(${ownerId}, ${item.meterId}, ${periodStart}, ${item.includedUnits}, ${now})`);
  await tx.run(Prisma.sql`
    INSERT INTO ${Prisma.raw(`"${table}"`)} (${Prisma.raw(`"${ownerColumn}"`)}, "meterId", "periodStart", "unitsUsed", "updatedAt")
    VALUES ${Prisma.join(values)}
    ON CONFLICT (${Prisma.raw(`"${ownerColumn}"`)}, "meterId", "periodStart")
    DO UPDATE SET "unitsUsed" = ${Prisma.raw(`"${table}"`)}."unitsUsed" + excluded."unitsUsed", "updatedAt" = excluded."updatedAt"`);
}
