import type { CapturedUsage } from '../../shared/contract.js';
import { HUB_HEADERS } from '../../shared/hub-headers.js';
import { parseUsageHeader, usageErrorOf } from '../../shared/usage.js';
import type { ProxyServices } from '../context.js';
import type { PaySeller } from '../seller-catalog.js';
import type { Identity } from './headers.js';

/**
 * The usage a seller reported in `hub-usage` on a 2xx (spec: Response to the agent), to record
 * before the request settles, since settlement reads it: nothing when there is none to record, or
 * the `hub-usage-error` of a header that could not be read.
 */
export function capturedUsage(
  seller: PaySeller,
  identity: Identity,
  status: number,
  headers: Record<string, string | string[] | undefined>,
): { usage: CapturedUsage } | { error: string } | undefined {
  const header = headers[HUB_HEADERS.usage];
  if (header === undefined || status < 200 || status > 299) return undefined;
  const parsed = parseUsageHeader(Array.isArray(header) ? header.join(',') : header);
  if (!parsed.ok) return { error: 'invalid_usage_header' };
  if (parsed.items.length === 0) return undefined;
  return { usage: { requestId: identity.requestId, sellerId: seller.id, organizationId: seller.organizationId, usage: parsed.items } };
}

/**
 * Records captured usage of a request without a payment (a paid one records it with its
 * settlement). Returns what goes in `hub-usage-error`, if anything: a usage denial's code, or
 * `settlement_failed` for anything else.
 */
export async function recordUsage(services: ProxyServices, usage: CapturedUsage): Promise<string | undefined> {
  try {
    await services.controlPlane.call('captureUsage', usage);
    return undefined;
  } catch (err) {
    return usageErrorOf(err, (failure) =>
      services.logger.error({ err: failure, requestId: usage.requestId }, 'recording hub-usage failed'),
    );
  }
}
