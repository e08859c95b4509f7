import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import type { Db } from '../db/client.js';
import { USAGE_DENIALS, type UsageDenial } from '../usage/denials.js';
import { recordUsage } from '../usage/record.js';

/**
 * Usage the proxy captured from a delivered response's `hub-usage` header. It takes the same path
 * as a usage report (control-plane/usage/record.ts), one report per service named, with source
 * `header` and the idempotency key `hub-usage:<requestId>:<serviceSlug>`, so a retried capture
 * records nothing twice.
 */
export const capturedUsageSchema = z.object({
  requestId: z.string().startsWith('hubreq_').max(64),
  sellerId: z.string().max(64),
  organizationId: z.string().max(64),
  usage: z
    .array(
      z.object({ serviceSlug: z.string().max(200), meterSlug: z.string().max(200), quantity: z.number().int().min(0).max(2_147_483_647) }),
    )
    .max(100),
});
export type CapturedUsage = z.infer<typeof capturedUsageSchema>;

/**
 * On failure, the code the proxy puts in `hub-usage-error`: a denial reason, or
 * `settlement_failed` for a capture that contradicts an earlier one of the same request.
 */
export type CaptureResult = { ok: true; usageEventIds: string[] } | { ok: false; reason: UsageDenial | 'settlement_failed' };

export async function captureUsage(db: Db, input: CapturedUsage): Promise<CaptureResult> {
  const byService = new Map<string, { meterSlug: string; quantity: bigint }[]>();
  for (const item of input.usage) {
    byService.set(item.serviceSlug, [
      ...(byService.get(item.serviceSlug) ?? []),
      { meterSlug: item.meterSlug, quantity: BigInt(item.quantity) },
    ]);
  }

  const usageEventIds: string[] = [];
  let failure: UsageDenial | 'settlement_failed' | undefined;
  for (const [serviceSlug, usage] of byService) {
    try {
      const recorded = await recordUsage(db, {
        organizationId: input.organizationId,
        idempotencyKey: `hub-usage:${input.requestId}:${serviceSlug}`,
        requestId: input.requestId,
        serviceSlug,
        usage,
        source: 'header',
      });
      usageEventIds.push(recorded.id);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      failure ??= isDenial(err.code) ? err.code : 'settlement_failed';
    }
  }
  return failure ? { ok: false, reason: failure } : { ok: true, usageEventIds };
}

function isDenial(code: string): code is UsageDenial {
  return (USAGE_DENIALS as readonly string[]).includes(code);
}
