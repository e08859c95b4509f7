import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { newId } from '../../shared/ids.js';
import { sumMicros } from '../../shared/money.js';
import type { Db } from '../db/client.js';
import { violatedConstraint } from '../db/constraints.js';
import { holdOpenForReports } from '../payments/attempt-status.js';
import { accessState, type Draw, type DrawItem } from './allowance.js';
import { groupCommit } from './group-commit.js';
import { accessPeriodStart } from './periods.js';
import { affordable, type Bill, bill } from './pricing.js';

/**
 * Commits one draw and its usage event in a single transaction: all of it or none of it, and a
 * duplicate idempotency key (unique per organization) rolls the whole draw back.
 *
 * Two ways, both safe under concurrency on either database:
 *
 * * Included units are counted against what is left of them, so a draw that takes any runs in an
 *   interactive transaction that first writes to the row guarding the count (the access; the
 *   buyer's pool rows, in meter order). A write takes PostgreSQL's row lock until commit, and
 *   SQLite runs one write transaction at a time, so concurrent draws queue up and each prices
 *   what the one before it left.
 * * Everything else (a paid request, or credit alone) is one batch of statements: the credit is
 *   taken by an update that sets the balance to NULL, which the column refuses, unless the access
 *   is active and can pay, so a balance never goes below zero and a refused debit aborts the
 *   batch. A batch costs half an interactive transaction, and batches that arrive together
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

type Tx = Prisma.TransactionClient;
type PricedItems = Bill<DrawItem>['items'];

/** Long enough for 100 reports queued on one access behind a pool of a few connections. */
const TRANSACTION_LIMITS = { maxWait: 15_000, timeout: 15_000 };

export async function commitDraw(db: Db, draw: Draw, event: UsageEventInput, now: Date): Promise<{ id: string; costMicros: bigint }> {
  const priced = bill(draw.items);
  const takesIncludedUnits = priced.items.some((item) => item.includedUnits > 0n);
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
  return db.$transaction(async (tx) => {
    const items =
      draw.kind === 'access'
        ? await drawFromAccess(tx, draw, now)
        : draw.kind === 'free'
          ? await drawFromFreePool(tx, draw, now)
          : bill(draw.items).items;
    const priced = { items, costMicros: sumMicros(items.map((item) => item.costMicros)) };
    const id = newId('usageEvent');
    await tx.$executeRaw(insertEvents([eventRow(id, draw, priced, event, now)]));
    if (items.length) await tx.$executeRaw(insertItems(itemRows(id, priced)));
    return { id, costMicros: priced.costMicros };
  }, TRANSACTION_LIMITS);
}

type EventRow = UsageEventInput & {
  id: string;
  accessId: string | null;
  paymentAttemptId: string | null;
  costMicros: bigint;
  createdAt: Date;
};
type ItemRow = { id: string; usageEventId: string; meterId: string; quantity: bigint; includedUnits: bigint; costMicros: bigint };
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
 * transaction), unless the access is active and can pay: no balance ever goes below zero.
 */
function debitAccesses(debits: Map<string, bigint>, now: Date) {
  const cases = [...debits].map(
    ([accessId, micros]) =>
      Prisma.sql`WHEN ${accessId} THEN (CASE WHEN "status" = 'active' AND "balanceMicros" >= ${micros} THEN "balanceMicros" - ${micros} ELSE NULL END)`,
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
    (i) => Prisma.sql`(${i.id}, ${i.usageEventId}, ${i.meterId}, ${i.quantity}, ${i.includedUnits}, ${i.costMicros})`,
  );
  return Prisma.sql`INSERT INTO "UsageEventItem" ("id", "usageEventId", "meterId", "quantity", "includedUnits", "costMicros") VALUES ${Prisma.join(values)}`;
}

async function drawFromAccess(tx: Tx, draw: Extract<Draw, { kind: 'access' }>, now: Date): Promise<PricedItems> {
  // The guarding write: it locks the access and reads it back as it is now.
  const access = await tx.access.update({
    where: { id: draw.access.id },
    data: { updatedAt: now },
    select: { status: true, periodStart: true, periodEnd: true, creditGrantedMicros: true, balanceMicros: true },
  });
  // Canceled, expired or renewed since it was priced: the caller tries its next draw.
  if (accessState(access, now) || accessPeriodStart(access).getTime() !== draw.periodStart.getTime()) throw new DrawNoLongerFits();
  const rows = await tx.accessMeterUsage.findMany({
    where: { accessId: draw.access.id, periodStart: draw.periodStart, meterId: { in: draw.items.map((item) => item.meterId) } },
    select: { meterId: true, unitsUsed: true },
  });
  const used = new Map(rows.map((row) => [row.meterId, row.unitsUsed]));
  const priced = bill(draw.items.map((item) => ({ ...item, includedUsed: used.get(item.meterId) ?? 0n })));
  if (!affordable(priced, access.creditGrantedMicros === null ? null : access.balanceMicros)) throw new DrawNoLongerFits();

  for (const item of priced.items) {
    if (item.includedUnits === 0n) continue;
    const key = { accessId: draw.access.id, meterId: item.meterId, periodStart: draw.periodStart };
    await tx.accessMeterUsage.upsert({
      where: { accessId_meterId_periodStart: key },
      create: { ...key, unitsUsed: item.includedUnits },
      update: { unitsUsed: { increment: item.includedUnits } },
    });
  }
  if (priced.costMicros > 0n) {
    const paid = await tx.access.updateMany({
      where: { id: draw.access.id, balanceMicros: { gte: priced.costMicros } },
      data: { balanceMicros: { decrement: priced.costMicros } },
    });
    if (paid.count !== 1) throw new DrawNoLongerFits();
  }
  return priced.items;
}

async function drawFromFreePool(tx: Tx, draw: Extract<Draw, { kind: 'free' }>, now: Date): Promise<PricedItems> {
  // The guarding writes: one row per meter of the buyer's pool, created at zero when new, in
  // meter order so two draws never wait on each other crosswise.
  const used = new Map<string, bigint>();
  for (const item of [...draw.items].sort((a, b) => (a.meterId < b.meterId ? -1 : 1))) {
    const key = { buyerId: draw.buyerId, meterId: item.meterId, periodStart: draw.periodStart };
    const row = await tx.includedUnitsUsage.upsert({
      where: { buyerId_meterId_periodStart: key },
      create: { ...key, unitsUsed: 0n },
      update: { updatedAt: now },
      select: { unitsUsed: true },
    });
    used.set(item.meterId, row.unitsUsed);
  }
  const priced = bill(draw.items.map((item) => ({ ...item, includedUsed: used.get(item.meterId) ?? 0n })));
  if (!affordable(priced, null)) throw new DrawNoLongerFits();

  for (const item of priced.items) {
    if (item.includedUnits === 0n) continue;
    await tx.includedUnitsUsage.update({
      where: { buyerId_meterId_periodStart: { buyerId: draw.buyerId, meterId: item.meterId, periodStart: draw.periodStart } },
      data: { unitsUsed: { increment: item.includedUnits } },
    });
  }
  return priced.items;
}
