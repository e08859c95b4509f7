import { createHash } from 'node:crypto';
import { ApiError } from '../../shared/errors.js';
import type { Lookup } from './reader.js';

/**
 * Idempotent reports. A key is recorded once per organization (a unique index, so it holds
 * across control-planes); with it is a digest of the report, so a replay can tell "the same
 * report again" (answered as it was first, `duplicate: true`) from "another report under a used
 * key" (`idempotency_key_reused`).
 */

export type ReportBody = {
  source: 'report' | 'header';
  requestId: string;
  serviceSlug: string;
  usage: readonly { meterSlug: string; quantity: bigint }[];
};

export type RecordedUsage = { id: string; duplicate: boolean; costMicros: bigint };

/** SHA-256 of the report in a canonical form: items by meter, so their order does not matter. */
export function reportDigest(body: ReportBody): string {
  const usage = [...body.usage]
    .sort((a, b) => (a.meterSlug < b.meterSlug ? -1 : a.meterSlug > b.meterSlug ? 1 : 0))
    .map((item) => [item.meterSlug, item.quantity.toString()]);
  return createHash('sha256')
    .update(JSON.stringify([body.source, body.requestId, body.serviceSlug, usage]))
    .digest('hex');
}

/** The earlier answer under the key, if an event was recorded under it; throws if it was for another report. */
export function replay(earlier: Lookup['event'], bodyDigest: string): RecordedUsage | undefined {
  if (!earlier) return undefined;
  if (earlier.bodyDigest !== bodyDigest) throw new ApiError('idempotency_key_reused');
  return { id: earlier.id, duplicate: true, costMicros: earlier.costMicros };
}
