import type { Logger } from 'pino';
import type { CapturedUsage } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { usageErrorOf } from '../../shared/usage.js';
import type { Db } from '../db/client.js';
import { recordUsage } from '../usage/record.js';

/**
 * Usage the proxy captured from a delivered response's `hub-usage` header. It takes the same path
 * as a usage report (control-plane/usage/record.ts), one report per service named, with source
 * `header` and the idempotency key `hub-usage:<requestId>:<serviceSlug>`, so a retried capture
 * records nothing twice. Every service named is recorded; the first refusal is thrown after the
 * others were: a usage denial, or another code for a capture that contradicts an earlier one.
 */
export async function captureUsage(db: Db, input: CapturedUsage): Promise<{ usageEventIds: string[] }> {
  const byService = new Map<string, { meterSlug: string; quantity: bigint }[]>();
  for (const item of input.usage) {
    byService.set(item.serviceSlug, [
      ...(byService.get(item.serviceSlug) ?? []),
      { meterSlug: item.meterSlug, quantity: BigInt(item.quantity) },
    ]);
  }

  const usageEventIds: string[] = [];
  let refusal: ApiError | undefined;
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
      refusal ??= err;
    }
  }
  if (refusal) throw refusal;
  return { usageEventIds };
}

/**
 * Records usage captured with a paid request's settlement and answers what `hub-usage-error` says
 * of it, if anything. A failure is only reported: the payment is settled all the same.
 */
export async function captureUsageError(db: Db, logger: Logger, input: CapturedUsage): Promise<string | undefined> {
  try {
    await captureUsage(db, input);
    return undefined;
  } catch (err) {
    return usageErrorOf(err, (failure) => logger.error({ err: failure, requestId: input.requestId }, 'recording hub-usage failed'));
  }
}
