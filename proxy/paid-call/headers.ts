import type { IncomingHttpHeaders } from 'node:http';
import type { RequestView } from '../../runtime/request-view.js';
import { HUB_HEADERS } from '../../shared/hub-headers.js';
import { LOOP_FIELD, withLoopMark } from '../arrival/loop-mark.js';

/** RFC 9110 §7.6.1: connection-specific fields never forwarded, in either direction. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

/** Inbound fields the agent may not set for the seller: payment proofs and anything hub signs. */
const PAYMENT_FIELDS = new Set(['x-payment', 'payment', 'payment-signature', 'payment-authorization']);

/** Fields the proxy recomputes for the upstream request. */
const RECOMPUTED = new Set(['host', 'content-length', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'expect', LOOP_FIELD]);

export function isHubField(name: string): boolean {
  return name.startsWith('hub-') || name.startsWith('x-hub-');
}

/** Names listed in a Connection header are hop-by-hop for this message too. */
function connectionTokens(value: string | string[] | undefined): Set<string> | undefined {
  // The usual values name no field beyond the hop-by-hop ones already dropped.
  if (!value || value === 'keep-alive' || value === 'close' || value === 'Keep-Alive' || value === 'Close') return undefined;
  const tokens = (Array.isArray(value) ? value.join(',') : value)
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  return tokens.length ? new Set(tokens) : undefined;
}

export type Identity = { requestId: string; agentId?: string | undefined; buyerId?: string | null | undefined; sandbox: boolean };

/**
 * Headers for the upstream request: the agent's own fields minus hop-by-hop fields, every
 * inbound `hub-*` / `x-hub-*` (so nothing can be spoofed), payment proofs and the agent's hub
 * token; then the forwarding fields (`CDN-Loop` with this installation's mark appended) and hub's
 * identity fields. The signature is added by the caller.
 * Any other Authorization (a seller's own API auth) passes through unchanged.
 */
export function upstreamRequestHeaders(
  req: RequestView,
  identity: Identity,
  dropAuthorization: boolean,
  bodyLength: number,
  scheme: 'http' | 'https',
  loopMark: string,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const inbound: IncomingHttpHeaders = req.headers;
  const listed = connectionTokens(inbound.connection);
  for (const name in inbound) {
    if (HOP_BY_HOP.has(name) || RECOMPUTED.has(name) || PAYMENT_FIELDS.has(name) || isHubField(name)) continue;
    if (listed?.has(name)) continue;
    if (name === 'authorization' && dropAuthorization) continue;
    const value = inbound[name];
    if (value !== undefined) out[name] = value;
  }

  const clientIp = req.socket.remoteAddress ?? '';
  const priorFor = inbound['x-forwarded-for'];
  out['x-forwarded-for'] = priorFor ? `${Array.isArray(priorFor) ? priorFor.join(', ') : priorFor}, ${clientIp}` : clientIp;
  out['x-forwarded-proto'] = scheme;
  if (inbound.host) out['x-forwarded-host'] = inbound.host;
  out[LOOP_FIELD] = withLoopMark(inbound[LOOP_FIELD], loopMark);
  if (bodyLength > 0 || (req.method !== 'GET' && req.method !== 'HEAD')) out['content-length'] = String(bodyLength);

  out[HUB_HEADERS.requestId] = identity.requestId;
  if (identity.agentId) {
    out[HUB_HEADERS.agentId] = identity.agentId;
    out[HUB_HEADERS.anonymousId] = identity.agentId;
    if (identity.buyerId) out[HUB_HEADERS.buyerId] = identity.buyerId;
  }
  if (identity.sandbox) out[HUB_HEADERS.sandbox] = '1';
  return out;
}

/**
 * Response fields only hub may send the agent: its billing and usage headers, the payment
 * protocols' challenges and receipts. From the seller (or anything between), they would claim a
 * payment or a settlement hub never made, so they are dropped whatever the status.
 */
const PAYMENT_RESPONSE_FIELDS = new Set(['payment-required', 'payment-response', 'x-payment-response', 'payment-receipt']);

/**
 * Upstream response headers the agent may see: no hop-by-hop fields, nothing hub owns (every
 * `hub-*` field, the payment fields, and MPP's `Payment` challenges in `www-authenticate`; other
 * schemes there, such as the seller's own `Bearer`, pass).
 */
export function agentResponseHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const listed = connectionTokens(headers.connection);
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || listed?.has(name) || isHubField(name) || PAYMENT_RESPONSE_FIELDS.has(name)) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (name === 'www-authenticate') {
      const kept = withoutPaymentChallenges(value);
      if (kept !== undefined) out[name] = kept;
      continue;
    }
    out[name] = value;
  }
  return out;
}

/**
 * `www-authenticate` without `Payment` challenges; undefined when nothing else is left. A field
 * that joins several challenges with commas is dropped whole when one of them is a `Payment` one.
 */
function withoutPaymentChallenges(value: string | string[]): string | string[] | undefined {
  const kept = (Array.isArray(value) ? value : [value]).filter((field) => !/(?:^|,)\s*payment(?:\s|,|$)/i.test(field));
  if (kept.length === 0) return undefined;
  return kept.length === 1 ? kept[0] : kept;
}
