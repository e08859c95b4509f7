import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { RequestBatch, RequestTallyInput } from '../../shared/contract.js';
import { countCalls } from '../analytics/traffic-rollup.js';
import { chunks } from '../db/chunks.js';
import type { Db, Provider } from '../db/client.js';

type Tx = Prisma.TransactionClient;

/**
 * Request records (hubreq_…) written by the proxy in batches: an identified agent's request is
 * sent at once (the seller's usage check must find it, and waits for it if it comes first; see
 * usage/resolve.ts), completions and tallies of anonymous calls in the background.
 */

const RECORD_COLUMNS = [
  'id',
  'sellerId',
  'serviceId',
  'agentId',
  'buyerId',
  'method',
  'path',
  'sandbox',
  'lifecycle',
  'mode',
  'upstreamStatus',
  'createdAt',
  'completedAt',
] as const;
const RECORD_TYPES = [
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'boolean',
  'text',
  'text',
  'integer',
  'timestamp(3)',
  'timestamp(3)',
];
const TALLY_COLUMNS = ['sellerId', 'minute', 'sandbox', 'lifecycle', 'count'] as const;
const TALLY_TYPES = ['text', 'timestamp(3)', 'boolean', 'text', 'integer'];
/** Rows per statement: at most 13 parameters each stays far below SQLite's and PostgreSQL's limits. */
const ROWS_PER_STATEMENT = 500;

/**
 * Stores a batch from the proxy. Raw SQL throughout, one statement per 500 rows: the ORM's per-row
 * query building cost more CPU than the proxy that produced the rows. Rows of a seller deleted
 * meanwhile are dropped rather than failing the batch they share with other sellers' rows. A
 * record the control-plane already holds (a challenge for the request can be stored before the
 * proxy's record of it arrives) is kept as it is.
 */
export function recordRequests(db: Db, batch: RequestBatch, provider: Provider): Promise<number> {
  // One transaction: the calls counted for analytics commit with the rows that show them.
  return db.$transaction((tx) => storeBatch(tx, batch, provider));
}

async function storeBatch(db: Tx, batch: RequestBatch, provider: Provider): Promise<number> {
  const sql = new Placeholders(provider);
  let stored = 0;
  const calls: { sellerId: string; at: Date | number; count: number }[] = [];

  for (const rows of chunks(batch.created, ROWS_PER_STATEMENT)) {
    const tuples = rows.map((r) =>
      sql.tuple(
        [
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
        ],
        RECORD_TYPES,
      ),
    );
    const columns = quoted(RECORD_COLUMNS);
    const inserted = await db.$queryRawUnsafe<{ id: string }[]>(
      `WITH batch (${columns}) AS (VALUES ${tuples.join(', ')})
       INSERT INTO "RequestRecord" (${columns}) SELECT ${columns} FROM batch ${OF_EXISTING_SELLER}
       ON CONFLICT ("id") DO NOTHING RETURNING "id"`,
      ...sql.take(),
    );
    stored += inserted.length;
    const insertedIds = new Set(inserted.map((r) => r.id));
    for (const r of rows) {
      if (insertedIds.has(r.id) && r.lifecycle === 'delivered' && !r.sandbox)
        calls.push({ sellerId: r.sellerId, at: Date.parse(r.completedAt ?? r.createdAt), count: 1 });
    }
  }

  for (const rows of chunks(batch.completed, ROWS_PER_STATEMENT)) {
    // One UPDATE joined to the batch's values, instead of a statement per completed request.
    const tuples = rows.map((c) =>
      sql.tuple([c.id, c.lifecycle, c.upstreamStatus ?? null, new Date(c.completedAt)], ['text', 'text', 'integer', 'timestamp(3)']),
    );
    // A completion sent twice (a batch retried after its answer was lost) changes nothing twice.
    const updated = await db.$queryRawUnsafe<{ id: string; sellerId: string; sandbox: boolean | number; lifecycle: string }[]>(
      `WITH done (id, lifecycle, status, completed) AS (VALUES ${tuples.join(', ')})
       UPDATE "RequestRecord" SET "lifecycle" = done.lifecycle, "upstreamStatus" = done.status, "completedAt" = done.completed
       FROM done WHERE "RequestRecord"."id" = done.id AND "RequestRecord"."lifecycle" <> 'delivered'
       RETURNING "RequestRecord"."id", "RequestRecord"."sellerId", "RequestRecord"."sandbox", "RequestRecord"."lifecycle"`,
      ...sql.take(),
    );
    stored += updated.length;
    const completedAt = new Map(rows.map((c) => [c.id, Date.parse(c.completedAt)]));
    for (const r of updated) {
      if (r.lifecycle === 'delivered' && !r.sandbox) calls.push({ sellerId: r.sellerId, at: completedAt.get(r.id)!, count: 1 });
    }
  }

  for (const rows of chunks(mergeTallies(batch.tallies), ROWS_PER_STATEMENT)) {
    const tuples = rows.map((t) => sql.tuple([t.sellerId, new Date(t.minute), t.sandbox, t.lifecycle, t.count], TALLY_TYPES));
    const columns = quoted(TALLY_COLUMNS);
    // The sellers whose counts were stored: calls of one deleted meanwhile have no row to count into.
    const storedFor = await db.$queryRawUnsafe<{ sellerId: string }[]>(
      `WITH batch (${columns}) AS (VALUES ${tuples.join(', ')})
       INSERT INTO "RequestTally" (${columns}) SELECT ${columns} FROM batch ${OF_EXISTING_SELLER}
       ON CONFLICT ("sellerId", "minute", "sandbox", "lifecycle") DO UPDATE SET "count" = "RequestTally"."count" + excluded."count"
       RETURNING "sellerId"`,
      ...sql.take(),
    );
    stored += storedFor.length;
    const live = new Set(storedFor.map((r) => r.sellerId));
    for (const t of rows)
      if (live.has(t.sellerId) && t.lifecycle === 'delivered' && !t.sandbox)
        calls.push({ sellerId: t.sellerId, at: Date.parse(t.minute), count: t.count });
  }
  await countCalls(db, calls);
  return stored;
}

/**
 * Keeps the rows of sellers that still exist: one deleted meanwhile would otherwise fail the
 * whole statement on its foreign key. (It is also the WHERE clause SQLite needs before the
 * ON CONFLICT of an INSERT … SELECT.)
 */
const OF_EXISTING_SELLER = 'WHERE EXISTS (SELECT 1 FROM "Seller" WHERE "Seller"."id" = batch."sellerId")';

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

function quoted(columns: readonly string[]): string {
  return columns.map((c) => `"${c}"`).join(', ');
}

/**
 * Positional parameters for one statement in the provider's spelling (`?` or `$n`). PostgreSQL
 * cannot infer the types of a VALUES list, so tuples name a cast per column.
 */
class Placeholders {
  private values: unknown[] = [];
  constructor(private readonly provider: Provider) {}

  tuple(row: unknown[], pgTypes?: string[]): string {
    const marks = row.map((value, i) => {
      this.values.push(value);
      if (this.provider !== 'postgresql') return '?';
      return pgTypes ? `$${this.values.length}::${pgTypes[i]}` : `$${this.values.length}`;
    });
    return `(${marks.join(', ')})`;
  }

  /** The values of the statement just built; the next statement starts from `$1`. */
  take(): unknown[] {
    const values = this.values;
    this.values = [];
    return values;
  }
}
