import { isIP } from 'node:net';
import { type Dispatcher, Pool } from 'undici';
import type { RequestView } from '../../runtime/request-view.js';
import {
  ADDRESS_REFUSED,
  type AddressRefusedError,
  hostnameOf,
  portOf,
  refusedError,
  type UpstreamAddresses,
} from '../../runtime/upstream-addresses.js';
import type { HubConfig } from '../../shared/config.js';
import type { PaySeller } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { HUB_HEADERS } from '../../shared/hub-headers.js';
import { nowSeconds, signatureHeader } from '../../shared/signature.js';
import type { PublicOrigin } from '../arrival/public-origin.js';
import type { UpstreamErrorKind } from '../metrics.js';
import type { ClientGone } from './client-gone.js';
import { type Identity, upstreamRequestHeaders } from './headers.js';

/**
 * The seller's API as the proxy reaches it: one keep-alive pool per origin, connecting only where
 * the address policy allows, the target under the seller's base path, one signed and loop-marked
 * request, and what a failure before the response head means.
 */

/** What a signed request is made of (a `PayRequest` has it all). */
export type OutgoingRequest = {
  req: RequestView;
  method: string;
  /** The raw request target, path and query, as the agent sent it. */
  target: string;
  body: Buffer;
  bodyDigest: string;
  /** An encrypted request's plaintext, which goes upstream instead of `body`. */
  sealed?: { plaintext: Buffer; plaintextDigest: string; contentType: string } | undefined;
  dropAuthorization: boolean;
  origin: PublicOrigin;
};

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

/** Request headers that describe an encrypted request's body as sent (the JWE). */
const SEALED_BODY_FIELDS = ['content-encoding', 'content-md5', 'digest', 'content-digest', 'repr-digest'];

/**
 * Sends one signed request upstream with the seller's newest active secret (the seller is passed
 * apart from the request: a retry after a rotation signs with a fresher copy). The signature
 * covers the path exactly as sent (unnormalized) and the SHA-256 of the buffered body.
 */
export async function sendSigned(
  pools: UpstreamPools,
  request: OutgoingRequest,
  seller: PaySeller,
  identity: Identity,
  signal?: ClientGone,
): Promise<Forwarded> {
  const secret = seller.signingSecrets[0];
  if (!secret) throw new ApiError('signing_secret_required');

  const { method, sealed } = request;
  const body = sealed ? sealed.plaintext : request.body;
  const { origin, path } = upstreamTarget(seller, request.target);
  const headers = upstreamRequestHeaders(
    request.req,
    identity,
    request.dropAuthorization,
    body.length,
    request.origin.scheme,
    pools.loopMark,
  );
  if (sealed) {
    headers['content-type'] = sealed.contentType;
    // The response is encrypted whole: a compressed one would only be larger inside the JWE.
    delete headers['accept-encoding'];
    // What the agent said of the bytes it sent describes the JWE, not the plaintext the seller gets.
    for (const field of SEALED_BODY_FIELDS) delete headers[field];
  }
  headers[HUB_HEADERS.signature] = signatureHeader({
    timestamp: nowSeconds(),
    method,
    pathAndQuery: path,
    bodySha256: sealed ? sealed.plaintextDigest : request.bodyDigest,
    requestId: identity.requestId,
    agentId: identity.agentId,
    kid: secret.kid,
    secret: secret.secret,
    sandbox: identity.sandbox,
  });

  const response = await pools.for(origin).request({
    origin,
    method: method as Dispatcher.HttpMethod,
    path,
    headers,
    body: body.length || (method !== 'GET' && method !== 'HEAD') ? body : null,
    ...(signal ? { signal } : {}),
  });
  // undici passes statuses up to 999 through; HTTP defines none past 599, and nothing after
  // the proxy (the agent's client, hub's records) takes one.
  if (response.statusCode > 599) {
    response.body.on('error', () => {}).destroy(); // aborting its body is an error undici reports
    throw Object.assign(new Error(`the seller answered status ${response.statusCode}`), { code: UNDEFINED_STATUS });
  }
  return { response, kid: secret.kid, upstreamPath: path };
}

const UNDEFINED_STATUS = 'HUB_UPSTREAM_UNDEFINED_STATUS';

/**
 * One keep-alive connection pool per upstream origin, created on first use. Each new connection
 * is checked against the address policy where it is made (a name is resolved and its answer
 * checked; an IP literal is judged once, with its pool), so a name that starts answering with a
 * forbidden address is refused even though the seller was accepted; a kept-alive connection costs
 * nothing more. Every request is marked with `loopMark` (loop-mark.ts).
 */
export class UpstreamPools {
  private readonly pools = new Map<string, Pool>();

  constructor(
    private readonly config: HubConfig['proxy'],
    private readonly addresses: UpstreamAddresses,
    readonly loopMark: string,
  ) {}

  for(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: 256,
        keepAliveTimeout: 30_000,
        connectTimeout: this.config.connectTimeoutMs,
        headersTimeout: this.config.headersTimeoutMs,
        bodyTimeout: this.config.bodyTimeoutMs,
        connect: this.connectOptions(new URL(origin)),
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /** A name is resolved through the policy's lookup; a literal the policy refuses fails every connection. */
  private connectOptions(origin: URL): Pool.Options['connect'] {
    const host = hostnameOf(origin);
    const port = portOf(origin);
    if (!isIP(host)) return { lookup: this.addresses.connectLookup(port) } as Pool.Options['connect'];
    const refusal = this.addresses.refusal(host, port);
    if (!refusal) return undefined;
    const error = refusedError(refusal);
    return (_options, callback) => callback(error, null);
  }

  size(): number {
    return this.pools.size;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => p.destroy())));
    this.pools.clear();
  }
}

/** Classifies an undici failure before response headers arrived into the agent-facing error. */
export function upstreamFailure(err: unknown): { kind: UpstreamErrorKind; error: ApiError } {
  const code = (err as { code?: string }).code ?? '';
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return { kind: 'connect_timeout', error: new ApiError('upstream_timeout', 'Connecting to the seller’s API timed out.') };
    case 'UND_ERR_HEADERS_TIMEOUT':
      return { kind: 'headers_timeout', error: new ApiError('upstream_timeout', 'The seller’s API sent no response headers in time.') };
    case 'UND_ERR_BODY_TIMEOUT':
      return { kind: 'body_timeout', error: new ApiError('upstream_timeout', 'The seller’s API stopped sending its response.') };
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return { kind: 'connect', error: new ApiError('upstream_unreachable') };
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
    case 'EPIPE':
      return { kind: 'reset', error: new ApiError('upstream_error', 'The seller’s API closed the connection.') };
    case ADDRESS_REFUSED: {
      const { refusal } = err as AddressRefusedError;
      if (refusal.kind === 'loop')
        return { kind: 'connect', error: new ApiError('loop_detected', `The seller’s API leads back to this hub: ${refusal.reason}.`) };
      return {
        kind: 'connect',
        error: new ApiError('upstream_unreachable', `The seller’s API is on an address this hub does not connect to: ${refusal.reason}.`),
      };
    }
    case UNDEFINED_STATUS:
      return { kind: 'other', error: new ApiError('upstream_error', 'The seller’s API answered with a status HTTP does not define.') };
    default:
      return { kind: 'other', error: new ApiError('upstream_error') };
  }
}
