import { ApiError } from '../shared/errors.js';
import { HUB_HEADERS } from '../shared/hub-headers.js';
import { isUsageDenial, parseUsageHeader } from '../shared/usage.js';
import type { ProxyServices } from './context.js';
import type { Identity } from './headers.js';
import type { PaySeller } from './seller-catalog.js';

/**
 * Records the usage a seller reported in `hub-usage` on a 2xx (spec: Response to the agent), before
 * the request settles, since settlement reads it. Returns what goes in `hub-usage-error`, if anything:
 * the header could not be read, a usage denial's code, or `settlement_failed` for anything else.
 */
export async function captureUsage(
  services: ProxyServices,
  seller: PaySeller,
  identity: Identity,
  status: number,
  headers: Record<string, string | string[] | undefined>,
): Promise<string | undefined> {
  const header = headers[HUB_HEADERS.usage];
  if (header === undefined || status < 200 || status > 299) return undefined;
  const parsed = parseUsageHeader(Array.isArray(header) ? header.join(',') : header);
  if (!parsed.ok) return 'invalid_usage_header';
  if (parsed.items.length === 0) return undefined;
  try {
    await services.controlPlane.call('captureUsage', {
      requestId: identity.requestId,
      sellerId: seller.id,
      organizationId: seller.organizationId,
      usage: parsed.items,
    });
    return undefined;
  } catch (err) {
    if (err instanceof ApiError) return isUsageDenial(err.code) ? err.code : 'settlement_failed';
    services.logger.error({ err, requestId: identity.requestId }, 'recording hub-usage failed');
    return 'settlement_failed';
  }
}
