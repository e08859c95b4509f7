import type { IncomingMessage } from 'node:http';
import type { Dispatcher } from 'undici';
import { ApiError } from '../shared/errors.js';
import { HUB_HEADERS } from '../shared/hub-headers.js';
import { nowSeconds, sha256Hex, signatureHeader } from '../shared/signature.js';
import { upstreamRequestHeaders, type Identity } from './headers.js';
import type { PaySeller } from './seller-catalog.js';
import type { UpstreamPools } from './upstream-pools.js';
import type { ClientGone } from './client-gone.js';

const EMPTY_BODY_SHA256 = sha256Hex('');

export type Forwarded = { response: Dispatcher.ResponseData; kid: string; upstreamPath: string };

/** Parsed upstream base URLs (a handful per deployment), so no request parses one. */
const parsedBases = new Map<string, { origin: string; basePath: string }>();

function parseBase(upstreamBaseUrl: string): { origin: string; basePath: string } {
  let parsed = parsedBases.get(upstreamBaseUrl);
  if (!parsed) {
    const base = new URL(upstreamBaseUrl);
    parsed = { origin: base.origin, basePath: base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname };
    if (parsedBases.size > 10_000) parsedBases.clear();
    parsedBases.set(upstreamBaseUrl, parsed);
  }
  return parsed;
}

/** Where a pay URL request goes: the seller's base URL path, then the request's raw path+query. */
export function upstreamTarget(seller: PaySeller, rawUrl: string): { origin: string; path: string } {
  const { origin, basePath } = parseBase(seller.upstreamBaseUrl);
  return { origin, path: `${basePath}${rawUrl.startsWith('/') ? rawUrl : `/${rawUrl}`}` };
}

/**
 * Sends one signed request upstream with the seller's newest active secret. The signature covers
 * the path exactly as sent (unnormalized) and the SHA-256 of the buffered body.
 */
export async function sendSigned(input: {
  pools: UpstreamPools;
  seller: PaySeller;
  req: IncomingMessage;
  body: Buffer;
  identity: Identity;
  dropAuthorization: boolean;
  signal?: ClientGone;
}): Promise<Forwarded> {
  const { seller, req, body, identity } = input;
  const secret = seller.signingSecrets[0];
  if (!secret) throw new ApiError('signing_secret_required');

  const { origin, path } = upstreamTarget(seller, req.url ?? '/');
  const method = (req.method ?? 'GET').toUpperCase();
  const headers = upstreamRequestHeaders(req, identity, input.dropAuthorization, body.length);
  headers[HUB_HEADERS.signature] = signatureHeader({
    timestamp: nowSeconds(),
    method,
    pathAndQuery: path,
    bodySha256: body.length ? sha256Hex(body) : EMPTY_BODY_SHA256,
    requestId: identity.requestId,
    agentId: identity.agentId,
    kid: secret.kid,
    secret: secret.secret,
    sandbox: identity.sandbox,
  });

  const response = await input.pools.for(origin).request({
    origin,
    method: method as Dispatcher.HttpMethod,
    path,
    headers,
    body: body.length || (method !== 'GET' && method !== 'HEAD') ? body : null,
    ...(input.signal ? { signal: input.signal } : {}),
  });
  return { response, kid: secret.kid, upstreamPath: path };
}
