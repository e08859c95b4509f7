import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { contentCoding } from '../../runtime/content-encoding.js';
import { mediaTypeOf } from '../../runtime/media-type.js';
import { discard, readUpTo } from '../../runtime/read-body.js';
import { JOSE_MEDIA_TYPE } from '../../shared/encryption/suite.js';
import { ApiError } from '../../shared/errors.js';
import type { Agreement } from './compact-jwe.js';
import type { JweCodec } from './jwe-codec.js';
import type { SealedRequest } from './sealed-request.js';

/**
 * The seller's response to an encrypted request, encrypted to the agent's reply key before the
 * agent (or anything on the way) sees it. The status and the headers stay outside, hub's billing
 * headers among them; the body's own content type travels inside, as the JWE's `cty`.
 *
 * - A body is read whole (up to a limit) and sent as one Compact JWE, `Content-Type:
 *   application/jose`. It is encrypted before the payment settles, so a body that cannot be
 *   delivered (too large, cut off) is never paid for.
 * - An event stream (`text/event-stream`) stays a stream: each chunk the seller sends becomes one
 *   event whose data is a Compact JWE with a `seq` number, and a last `event: end` carries an
 *   empty plaintext with `end: true`, so an agent can tell a complete stream from a cut one.
 * - An empty body stays empty.
 */

/** A response to deliver: its body streamed as it comes, or (encrypted whole) already in hand. */
export type PlainResponse = { statusCode: number; headers: IncomingHttpHeaders; body: Readable | Buffer };

/** Headers that describe the plaintext, not the JWE the agent receives. */
const REPRESENTATION_FIELDS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-md5',
  'content-range',
  'digest',
  'content-digest',
];

/**
 * The key agreement for one reply to `sealed`, a fresh one each time (one per message). It does
 * not depend on the answer, so it is worked out while the seller works: the first may have been
 * started beside the decryption (`agreeEarly`); otherwise it is asked for as the request goes out.
 */
export function replyAgreement(codec: JweCodec, sealed: SealedRequest): Promise<Agreement> {
  const reply = sealed.firstReply ?? codec.agree(sealed.replyPoint);
  sealed.firstReply = undefined;
  reply.catch(() => {}); // unused when the seller answers 402 or fails; awaited otherwise
  return reply;
}

/**
 * `reply` is a key agreement with the agent's reply key, asked for as the request went out so that
 * it is worked out while the seller works: it encrypts the body, or an event stream's first event.
 */
export async function sealResponse(
  codec: JweCodec,
  sealed: SealedRequest,
  reply: Promise<Agreement>,
  response: PlainResponse & { body: Readable },
  maxBytes: number,
): Promise<PlainResponse> {
  const headers: IncomingHttpHeaders = { ...response.headers };
  if (contentCoding(headers['content-encoding']) !== 'identity') {
    // hub asked for none (no Accept-Encoding upstream); sealed as it is, the agent could not read it.
    discard(response.body);
    throw new ApiError('upstream_error', 'The seller’s answer is compressed, which hub does not encrypt: answer without Content-Encoding.');
  }
  const cty = typeof headers['content-type'] === 'string' ? headers['content-type'] : undefined;
  for (const field of REPRESENTATION_FIELDS) delete headers[field];

  if (cty !== undefined && mediaTypeOf(cty) === 'text/event-stream') {
    headers['content-type'] = 'text/event-stream';
    headers['cache-control'] = 'no-cache';
    return { statusCode: response.statusCode, headers, body: Readable.from(sealEvents(codec, sealed, reply, response.body, cty)) };
  }

  const declared = Number(response.headers['content-length']);
  if (declared > maxBytes) {
    discard(response.body);
    throw tooLarge(maxBytes);
  }
  const { bytes, complete } = await readUpTo(response.body, maxBytes);
  if (!complete) throw tooLarge(maxBytes);
  if (bytes.length === 0) {
    // A 204 or a 304 carries no Content-Length at all (RFC 9110 §8.6).
    if (response.statusCode !== 204 && response.statusCode !== 304) headers['content-length'] = '0';
    return { statusCode: response.statusCode, headers, body: bytes };
  }
  const jwe = Buffer.from(await codec.seal(bytes, await reply, cty ? { cty } : {}), 'latin1');
  headers['content-type'] = JOSE_MEDIA_TYPE;
  headers['content-length'] = String(jwe.length);
  return { statusCode: response.statusCode, headers, body: jwe };
}

async function* sealEvents(
  codec: JweCodec,
  sealed: SealedRequest,
  reply: Promise<Agreement>,
  body: Readable,
  cty: string,
): AsyncGenerator<Buffer> {
  // One agreement per event: the first event's is made already, each later one's with its sealing.
  let seq = 0;
  const under = async () => (seq === 0 ? await reply : sealed.replyPoint);
  for await (const chunk of body as AsyncIterable<Buffer>) {
    const jwe = await codec.seal(chunk, await under(), { cty, seq });
    seq++;
    yield Buffer.from(`data: ${jwe}\n\n`, 'latin1');
  }
  const end = await codec.seal(new Uint8Array(0), await under(), { cty, seq, end: true });
  yield Buffer.from(`event: end\ndata: ${end}\n\n`, 'latin1');
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('upstream_error', `The seller’s response is larger than hub encrypts (${maxBytes} bytes).`);
}

/**
 * hub's own JSON answer to an encrypted request (the storefront's: an account, a minted key),
 * encrypted to the request's reply key as a seller's answer is. Errors and challenges stay clear.
 */
export async function sendSealedJson(
  res: ServerResponse,
  codec: JweCodec,
  sealed: SealedRequest,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<void> {
  const jwe = await codec.seal(Buffer.from(JSON.stringify(body)), await replyAgreement(codec, sealed), { cty: 'application/json' });
  res.writeHead(status, { ...headers, 'content-type': JOSE_MEDIA_TYPE, 'content-length': String(Buffer.byteLength(jwe)) });
  res.end(jwe);
}
