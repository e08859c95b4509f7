import { type Dispatcher, request } from 'undici';
import { readUpTo } from '../../runtime/read-body.js';
import { ADDRESS_REFUSED, type UpstreamAddresses } from '../../runtime/upstream-addresses.js';
import { HUB_HEADERS } from '../../shared/hub-headers.js';
import { openSecret } from '../../shared/secret-box.js';
import { nowSeconds, type SignaturePurpose, sha256Hex, signatureHeader } from '../../shared/signature.js';
import type { Db } from '../db/client.js';

/**
 * One signed call to a seller's account endpoint (spec: Seller account endpoint): a JSON POST
 * signed with the seller's newest active secret and the route's purpose, within the response
 * budget, never following a redirect. A 401 is tried once more when a newer secret has become
 * active since (the seller may already hold only that one). The reply is read up to 64 KiB.
 */
export type AccountCall = {
  sellerId: string;
  /** A sandbox seller's calls carry the spec's sandbox marks, as its proxied traffic does. */
  sandbox: boolean;
  url: string;
  purpose: SignaturePurpose;
  body: unknown;
  requestId: string;
  agentId: string;
  /** The later variant's buyer headers; absent values are not sent. */
  buyer?: { id: string | null; email: string | null };
};

export type AccountCallResult =
  | { kind: 'reply'; status: number; retryAfter: string | undefined; text: string }
  | { kind: 'unreachable'; reason: string }
  | { kind: 'no_secret' };

const MAX_REPLY_BYTES = 64 * 1024;

/**
 * With `addresses`, the connection keeps the policy of where hub connects on a seller's say-so
 * (runtime/upstream-addresses.ts): the endpoint was checked when it was stored, and its name is
 * checked again for every connection, since it can resolve elsewhere by now.
 */
export async function callAccountEndpoint(
  secrets: SecretCache,
  call: AccountCall,
  budgetMs: number,
  addresses?: UpstreamAddresses,
): Promise<AccountCallResult> {
  const body = Buffer.from(JSON.stringify(call.body));
  const first = await secrets.newest(call.sellerId);
  if (!first) return { kind: 'no_secret' };
  const outbound = addresses?.outbound(new URL(call.url));
  if (outbound && 'refusal' in outbound) return { kind: 'unreachable', reason: outbound.refusal.reason };
  const dispatcher = outbound?.dispatcher;
  const result = await send(call, body, first, budgetMs, dispatcher);
  if (result.kind !== 'reply' || result.status !== 401) return result;
  const newer = await secrets.newest(call.sellerId, { fresh: true });
  return newer && newer.kid !== first.kid ? send(call, body, newer, budgetMs, dispatcher) : result;
}

type Secret = { kid: string; secret: string };

/**
 * Sellers' newest active signing secrets, opened once per worker pass (or mint) rather than
 * once per call. `fresh` reads past the cache, for the retry after a 401.
 */
export class SecretCache {
  private readonly opened = new Map<string, Promise<Secret | undefined>>();

  constructor(
    private readonly db: Db,
    private readonly masterKey: Buffer,
  ) {}

  newest(sellerId: string, options: { fresh?: boolean } = {}): Promise<Secret | undefined> {
    let found = options.fresh ? undefined : this.opened.get(sellerId);
    if (!found) {
      found = this.read(sellerId);
      this.opened.set(sellerId, found);
    }
    return found;
  }

  private async read(sellerId: string): Promise<Secret | undefined> {
    const row = await this.db.signingSecret.findFirst({
      where: { sellerId, status: 'active' },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    return row ? { kid: row.id, secret: openSecret(this.masterKey, row.encryptedSecret) } : undefined;
  }
}

async function send(
  call: AccountCall,
  body: Buffer,
  secret: { kid: string; secret: string },
  budgetMs: number,
  dispatcher: Dispatcher | undefined,
): Promise<AccountCallResult> {
  const url = new URL(call.url);
  const pathAndQuery = `${url.pathname}${url.search}`;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [HUB_HEADERS.requestId]: call.requestId,
    [HUB_HEADERS.agentId]: call.agentId,
    [HUB_HEADERS.anonymousId]: call.agentId,
    [HUB_HEADERS.signature]: signatureHeader({
      timestamp: nowSeconds(),
      method: 'POST',
      pathAndQuery,
      bodySha256: sha256Hex(body),
      requestId: call.requestId,
      agentId: call.agentId,
      purpose: call.purpose,
      kid: secret.kid,
      secret: secret.secret,
      sandbox: call.sandbox,
    }),
  };
  if (call.sandbox) headers[HUB_HEADERS.sandbox] = '1';
  if (call.buyer?.id) headers[HUB_HEADERS.buyerId] = call.buyer.id;
  if (call.buyer?.email) headers[HUB_HEADERS.buyerEmail] = call.buyer.email;
  try {
    const signal = AbortSignal.timeout(budgetMs);
    const res = await request(url, {
      method: 'POST',
      headers,
      body,
      signal,
      headersTimeout: budgetMs,
      bodyTimeout: budgetMs,
      ...(dispatcher ? { dispatcher } : {}),
    });
    const text = (await readUpTo(res.body, MAX_REPLY_BYTES)).bytes.toString('utf8');
    const retryAfter = res.headers['retry-after'];
    return { kind: 'reply', status: res.statusCode, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, text };
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    // The budget's signal and undici's own timeouts share the same limit; whichever fires first,
    // the seller did not answer in time.
    const timedOut =
      e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT';
    const reason = timedOut
      ? `no answer within ${budgetMs} ms`
      : e.code === ADDRESS_REFUSED
        ? (e.message ?? 'an address hub does not connect to')
        : (e.code ?? e.message ?? 'network error');
    return { kind: 'unreachable', reason };
  }
}
