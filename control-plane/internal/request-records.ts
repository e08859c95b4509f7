import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { RequestBatch, RequestTallyInput } from '../../shared/contract.js';
import { countCalls } from '../analytics/traffic-rollup.js';
import type { Db, Provider } from '../db/client.js';
import { columnList, type JsonColumn, jsonRows, OF_EXISTING_SELLER, type Sql, sqlOf } from '../db/sql.js';

/**
 * Request records (hubreq_…) written by the proxy in batches: an identified agent's request is
 * sent at once (the seller's usage check must find it, and waits for it if it comes first; see
 * usage/resolve.ts), completions and tallies of anonymous calls in the background.
 */

const RECORD_COLUMNS: JsonColumn[] = [
  ['id', 'text'],
  ['sellerId', 'text'],
  ['serviceId', 'text'],
  ['agentId', 'text'],
  ['buyerId', 'text'],
  ['method', 'text'],
  ['path', 'text'],
  ['sandbox', 'boolean'],
  ['lifecycle', 'text'],
  ['mode', 'text'],
  ['upstreamStatus', 'integer'],
  ['createdAt', 'timestamp(3)'],
  ['completedAt', 'timestamp(3)'],
];
const COMPLETION_COLUMNS: JsonColumn[] = [
  ['id', 'text'],
  ['lifecycle', 'text'],
  ['upstreamStatus', 'integer'],
  ['completedAt', 'timestamp(3)'],
];
const TALLY_COLUMNS: JsonColumn[] = [
  ['sellerId', 'text'],
  ['minute', 'timestamp(3)'],
  ['sandbox', 'boolean'],
  ['lifecycle', 'text'],
  ['count', 'integer'],
];

/**
 * Stores a batch from the proxy, on the SQL lane (db/sql.ts): one statement for each part of the
 * batch, its rows bound as one parameter (`jsonRows`); the ORM's per-row query building cost more
 * CPU than the proxy that produced the rows. Rows of a seller deleted meanwhile are dropped rather
 * than failing the batch they share with other sellers' rows. A record the control-plane already
 * holds (a challenge for the request can be stored before the proxy's record of it arrives) is
 * kept as it is.
 */
export function recordRequests(db: Db, batch: RequestBatch): Promise<number> {
  const lane = sqlOf(db);
  // One transaction: the calls counted for analytics commit with the rows that show them.
  return lane.transaction((tx) => storeBatch(tx, lane.provider, batch));
}

async function storeBatch(tx: Sql, provider: Provider, batch: RequestBatch): Promise<number> {
  let stored = 0;
  // Sandbox calls too: a sandbox seller is a seller of its own (D-227), so counting per seller
  // keeps them apart from live ones.
  const calls: { sellerId: string; at: Date | number; count: number }[] = [];

  if (batch.created.length) {
    const rows = batch.created.map((r) => [
      r.id,
      r.sellerId,
      r.serviceId ?? null,
      r.agentId ?? null,
      r.buyerId ?? null,
      r.method,
      r.path,
      r.sandbox,
      r.lifecycle,
      r.mode ?? 'paid',
      r.upstreamStatus ?? null,
      new Date(r.createdAt),
      r.completedAt ? new Date(r.completedAt) : null,
    ]);
    const inserted = await tx.all<{ id: string }>(Prisma.sql`
      INSERT INTO "RequestRecord" (${columnList(RECORD_COLUMNS)})
      SELECT ${columnList(RECORD_COLUMNS)} FROM ${jsonRows(provider, RECORD_COLUMNS, rows)} AS batch ${OF_EXISTING_SELLER}
      ON CONFLICT ("id") DO NOTHING RETURNING "id"`);
    stored += inserted.length;
    const insertedIds = new Set(inserted.map((r) => r.id));
    for (const r of batch.created) {
      if (insertedIds.has(r.id) && r.lifecycle === 'delivered')
        calls.push({ sellerId: r.sellerId, at: Date.parse(r.completedAt ?? r.createdAt), count: 1 });
    }
  }

  if (batch.completed.length) {
    // One UPDATE joined to the batch's rows, instead of a statement per completed request.
    const rows = batch.completed.map((c) => [c.id, c.lifecycle, c.upstreamStatus ?? null, new Date(c.completedAt)]);
    // A completion sent twice (a batch retried after its answer was lost) changes nothing twice.
    const updated = await tx.all<{ id: string; sellerId: string; lifecycle: string }>(Prisma.sql`
      UPDATE "RequestRecord" SET "lifecycle" = done."lifecycle", "upstreamStatus" = done."upstreamStatus", "completedAt" = done."completedAt"
      FROM ${jsonRows(provider, COMPLETION_COLUMNS, rows)} AS done
      WHERE "RequestRecord"."id" = done."id" AND "RequestRecord"."lifecycle" <> 'delivered'
      RETURNING "RequestRecord"."id", "RequestRecord"."sellerId", "RequestRecord"."lifecycle"`);
    stored += updated.length;
    const completedAt = new Map(batch.completed.map((c) => [c.id, Date.parse(c.completedAt)]));
    for (const r of updated) {
      if (r.lifecycle === 'delivered') calls.push({ sellerId: r.sellerId, at: completedAt.get(r.id)!, count: 1 });
    }
  }

  const tallies = mergeTallies(batch.tallies);
  if (tallies.length) {
    const rows = tallies.map((t) => [t.sellerId, new Date(t.minute), t.sandbox, t.lifecycle, t.count]);
    // The sellers whose counts were stored: calls of one deleted meanwhile have no row to count into.
    const storedFor = await tx.all<{ sellerId: string }>(Prisma.sql`
      INSERT INTO "RequestTally" (${columnList(TALLY_COLUMNS)})
      SELECT ${columnList(TALLY_COLUMNS)} FROM ${jsonRows(provider, TALLY_COLUMNS, rows)} AS batch ${OF_EXISTING_SELLER}
      ON CONFLICT ("sellerId", "minute", "sandbox", "lifecycle") DO UPDATE SET "count" = "RequestTally"."count" + excluded."count"
      RETURNING "sellerId"`);
    stored += storedFor.length;
    const live = new Set(storedFor.map((r) => r.sellerId));
    for (const t of tallies)
      if (live.has(t.sellerId) && t.lifecycle === 'delivered')
        calls.push({ sellerId: t.sellerId, at: Date.parse(t.minute), count: t.count });
  }
  await countCalls(tx, calls);
  return stored;
}

/** One row per key: PostgreSQL refuses an upsert that touches the same row twice. */
function mergeTallies(tallies: RequestTallyInput[]): RequestTallyInput[] {
  const merged = new Map<string, RequestTallyInput>();
  for (const t of tallies) {
    const key = `${t.sellerId} ${Date.parse(t.minute)} ${t.sandbox} ${t.lifecycle}`;
    const seen = merged.get(key);
    merged.set(key, seen ? { ...seen, count: seen.count + t.count } : t);
  }
  return [...merged.values()];
}
