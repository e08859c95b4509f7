import { request } from 'undici';
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

export async function callAccountEndpoint(db: Db, masterKey: Buffer, call: AccountCall, budgetMs: number): Promise<AccountCallResult> {
  const body = Buffer.from(JSON.stringify(call.body));
  const first = await newestSecret(db, masterKey, call.sellerId);
  if (!first) return { kind: 'no_secret' };
  const result = await send(call, body, first, budgetMs);
  if (result.kind !== 'reply' || result.status !== 401) return result;
  const newer = await newestSecret(db, masterKey, call.sellerId);
  return newer && newer.kid !== first.kid ? send(call, body, newer, budgetMs) : result;
}

async function send(
  call: AccountCall,
  body: Buffer,
  secret: { kid: string; secret: string },
  budgetMs: number,
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
    }),
  };
  if (call.buyer?.id) headers[HUB_HEADERS.buyerId] = call.buyer.id;
  if (call.buyer?.email) headers[HUB_HEADERS.buyerEmail] = call.buyer.email;
  try {
    const signal = AbortSignal.timeout(budgetMs);
    const res = await request(url, { method: 'POST', headers, body, signal, headersTimeout: budgetMs, bodyTimeout: budgetMs });
    const text = await readLimited(res.body, MAX_REPLY_BYTES);
    const retryAfter = res.headers['retry-after'];
    return { kind: 'reply', status: res.statusCode, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, text };
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    const reason =
      e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${budgetMs} ms` : (e.code ?? e.message ?? 'network error');
    return { kind: 'unreachable', reason };
  }
}

async function readLimited(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function newestSecret(db: Db, masterKey: Buffer, sellerId: string) {
  const row = await db.signingSecret.findFirst({
    where: { sellerId, status: 'active' },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  return row ? { kid: row.id, secret: openSecret(masterKey, row.encryptedSecret) } : undefined;
}
