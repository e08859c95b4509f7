import { z } from 'zod';
import type { Db, Provider } from '../db/client.js';

/**
 * Request records (hubreq_…) written by the proxy in batches. The proxy awaits the record of an
 * identified agent's request before forwarding it (the seller's usage check must find it), and
 * sends everything else (completions, anonymous probes) in the background.
 */
export const requestRecordSchema = z.object({
  id: z.string().startsWith('hubreq_').max(64),
  sellerId: z.string().max(64),
  serviceId: z.string().max(64).nullish(),
  agentId: z.string().max(64).nullish(),
  buyerId: z.string().max(64).nullish(),
  method: z.string().max(16),
  path: z.string().max(2048),
  sandbox: z.boolean(),
  lifecycle: z.enum(['forwarded', 'delivered', 'failed']),
  /** `free` when the agent sent `hub-mode: free` (the buyer's included units instead of a payment). */
  mode: z.enum(['paid', 'free']).optional(),
  upstreamStatus: z.number().int().min(100).max(599).nullish(),
  createdAt: z.iso.datetime(),
  completedAt: z.iso.datetime().nullish(),
});
export type RequestRecordInput = z.infer<typeof requestRecordSchema>;

export const requestCompletionSchema = z.object({
  id: z.string().startsWith('hubreq_').max(64),
  lifecycle: z.enum(['delivered', 'failed']),
  upstreamStatus: z.number().int().min(100).max(599).nullish(),
  completedAt: z.iso.datetime(),
});
export type RequestCompletion = z.infer<typeof requestCompletionSchema>;

/**
 * Stores a batch: new records in one multi-row insert (the common case, anonymous traffic arrives
 * here once, already complete), then the completions of records stored earlier (identified
 * requests, recorded before forwarding).
 */
const COLUMNS = ['id', 'sellerId', 'serviceId', 'agentId', 'buyerId', 'method', 'path', 'sandbox', 'lifecycle', 'mode', 'upstreamStatus', 'createdAt', 'completedAt'] as const;
/** Rows per INSERT: 13 parameters each stays far below SQLite's and PostgreSQL's parameter limits. */
const ROWS_PER_INSERT = 500;

/**
 * Stores a batch: new records with one multi-row INSERT per 500 (the common case, anonymous
 * traffic arrives here once, already complete; raw SQL because the ORM's per-row query building
 * cost more CPU than the proxy that produced the rows), then the completions of records stored
 * earlier (identified requests, recorded before forwarding).
 */
export async function recordRequests(db: Db, batch: { created: RequestRecordInput[]; completed: RequestCompletion[] }, provider: Provider): Promise<number> {
  for (let i = 0; i < batch.created.length; i += ROWS_PER_INSERT) {
    const rows = batch.created.slice(i, i + ROWS_PER_INSERT);
    const values: unknown[] = [];
    const tuples = rows.map((r) => {
      values.push(r.id, r.sellerId, r.serviceId ?? null, r.agentId ?? null, r.buyerId ?? null, r.method, r.path, r.sandbox, r.lifecycle, r.mode ?? 'paid', r.upstreamStatus ?? null, new Date(r.createdAt), r.completedAt ? new Date(r.completedAt) : null);
      const first = values.length - COLUMNS.length;
      return `(${COLUMNS.map((_, c) => (provider === 'postgresql' ? `$${first + c + 1}` : '?')).join(', ')})`;
    });
    const columns = COLUMNS.map((c) => `"${c}"`).join(', ');
    await db.$executeRawUnsafe(`INSERT INTO "RequestRecord" (${columns}) VALUES ${tuples.join(', ')}`, ...values);
  }
  if (batch.completed.length) {
    await db.$transaction(
      batch.completed.map((c) =>
        db.requestRecord.updateMany({
          where: { id: c.id },
          data: { lifecycle: c.lifecycle, upstreamStatus: c.upstreamStatus ?? null, completedAt: new Date(c.completedAt) },
        }),
      ),
    );
  }
  return batch.created.length + batch.completed.length;
}
