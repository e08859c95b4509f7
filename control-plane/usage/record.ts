import { ApiError } from '../../shared/errors.js';
import type { Db } from '../db/client.js';
import { violatedConstraint } from '../db/constraints.js';
import { allowance } from './allowance.js';
import { commitDraw, DrawNoLongerFits, PaymentClosed } from './draw.js';
import { type RecordedUsage, replay, reportDigest } from './idempotency.js';
import { mergeItems } from './pricing.js';
import { usageReader } from './reader.js';
import { lookupRequest, PAYMENT_CLOSED, resolveRequest } from './resolve.js';

/**
 * Records a usage report: the one path for `POST /v1/usage` and for usage the proxy captured
 * from a `hub-usage` header. Resolves the request as a check does, prices the usage, draws
 * included units and credit (nothing for a paid request: its payment covers it, and settlement
 * reads these events) and records the event, atomically. Throws the spec's report failures as
 * `ApiError`s.
 */
export type UsageReport = {
  organizationId: string;
  idempotencyKey: string;
  requestId: string;
  serviceSlug: string;
  usage: readonly { meterSlug: string; quantity: bigint }[];
  source: 'report' | 'header';
};

export async function recordUsage(db: Db, report: UsageReport, now = new Date()): Promise<RecordedUsage> {
  const { organizationId, idempotencyKey, requestId, serviceSlug, source } = report;
  const usage = mergeItems(report.usage);
  const bodyDigest = reportDigest({ source, requestId, serviceSlug, usage });
  const reader = usageReader(db);
  // The key's earlier event comes with the rest of the lookup: one statement for either answer.
  const found = await lookupRequest(reader, organizationId, requestId, serviceSlug, idempotencyKey);
  const earlier = replay(found.event, bodyDigest);
  if (earlier) return earlier;

  const resolved = await resolveRequest(reader, organizationId, requestId, serviceSlug, 'report', found);
  if (!resolved.ok) throw new ApiError(resolved.reason, resolved.detail);
  const allowed = await allowance(reader, resolved, usage, 'report', now);
  if (!allowed.ok) throw new ApiError(allowed.reason);

  const event = { organizationId, idempotencyKey, bodyDigest, requestId, serviceId: resolved.service.id, source };
  for (const draw of allowed.draws) {
    try {
      const { id, costMicros } = await commitDraw(db, draw, event, now);
      return { id, duplicate: false, costMicros };
    } catch (err) {
      if (err instanceof DrawNoLongerFits) continue;
      if (err instanceof PaymentClosed) throw new ApiError('access_not_found', PAYMENT_CLOSED);
      // The same key recorded meanwhile by a concurrent duplicate: answer as a replay.
      if (violatedConstraint(err) === 'unique') {
        const again = await lookupRequest(reader, organizationId, requestId, serviceSlug, idempotencyKey);
        const recorded = replay(again.event, bodyDigest);
        if (recorded) return recorded;
      }
      throw err;
    }
  }
  throw new ApiError('usage_exhausted');
}
