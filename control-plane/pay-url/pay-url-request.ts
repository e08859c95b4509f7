import { request } from 'undici';
import { readUpTo } from '../../runtime/read-body.js';
import type { HubConfig } from '../../shared/config.js';
import { ApiError } from '../../shared/errors.js';
import { HUB_HEADERS } from '../../shared/hub-headers.js';
import { payHostOf } from '../../shared/pay-host.js';
import { decodeHeaderJson, X402_HEADERS } from '../../shared/payments/x402-headers.js';

/**
 * A request to a seller's pay URL made by the control-plane itself, as an agent would make it: to
 * this hub's own proxy on loopback, with the pay host as Host (the control-plane runs beside it,
 * D-001). What it answers is shown to the seller (a sandbox drive, the dashboard's "try it"):
 * enough to debug, never unbounded.
 */

const MAX_BODY_BYTES = 16_384;
const SHOWN_HEADERS = [
  'content-type',
  'hub-billing',
  'hub-usage-adjusted',
  X402_HEADERS.response,
  X402_HEADERS.required,
  'www-authenticate',
  'location',
  HUB_HEADERS.requestId,
];

export type PayUrlCall = { method: string; path: string; body?: string | undefined; headers?: Record<string, string> };
export type PayUrlExchange = { status: number; headers: Record<string, string>; body: string };

export async function requestPayUrl(config: HubConfig, sellerSlug: string, call: PayUrlCall): Promise<PayUrlExchange> {
  try {
    const res = await request(`http://127.0.0.1:${config.proxy.port}${call.path}`, {
      method: call.method as 'GET',
      headers: {
        host: payHostOf(sellerSlug, config.payDomain),
        ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...call.headers,
      },
      body: call.body ?? null,
      headersTimeout: config.proxy.headersTimeoutMs,
      bodyTimeout: config.proxy.bodyTimeoutMs,
    });
    // Read no further than is shown: the seller's answer may be of any size.
    const body = (await readUpTo(res.body, MAX_BODY_BYTES)).bytes.toString('utf8');
    const headers: Record<string, string> = {};
    for (const name of SHOWN_HEADERS) {
      const value = res.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    return { status: res.statusCode, headers, body };
  } catch (err) {
    throw unanswered(err);
  }
}

/** The answer's x402 challenge (`payment-required`, base64 JSON), decoded; null without a readable one. */
export function paymentRequiredOf(exchange: PayUrlExchange): unknown {
  const header = exchange.headers[X402_HEADERS.required];
  if (!header) return null;
  try {
    return decodeHeaderJson(header);
  } catch {
    return null;
  }
}

/**
 * A pay URL that did not answer in full (refused, too slow, headers too big, cut off) is the spec's
 * envelope for a gateway's failure, never a 500: the seller sees what went wrong.
 */
function unanswered(err: unknown): ApiError {
  const e = err as { name?: string; code?: string; message?: string };
  if (e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.name === 'TimeoutError')
    return new ApiError('upstream_timeout', 'The pay URL did not answer in time.');
  return new ApiError('upstream_error', `The pay URL's answer could not be read (${e.code ?? e.message ?? 'network error'}).`);
}
