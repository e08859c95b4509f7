import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { HUB_HEADERS, headerValue } from '../shared/hub-headers.js';
import { type SignatureFailure, type SignaturePurpose, sha256Hex, verifySignature } from '../shared/signature.js';
import { type HubIdentity, identityFrom } from './identity.js';
import { BodyTooLargeError, DEFAULT_MAX_BODY_BYTES, readRawBody } from './raw-body.js';
import { type SigningSecrets, secretLookup } from './secrets.js';

export type VerifyOptions = {
  secrets: SigningSecrets;
  /** Seconds `t` may be off in either direction; the spec's default is 300. */
  toleranceSeconds?: number;
  /** The clock, unix seconds (tests set it). */
  now?: () => number;
  /** Larger bodies are refused with 413 before any verification. */
  maxBodyBytes?: number;
};

/** The parts of a request the signature covers, however a framework hands them over. */
export type SignedRequestParts = {
  method: string;
  /** The raw request target (Node's `req.url` before any router rewrote it). */
  url: string;
  headers: IncomingHttpHeaders;
  body: Uint8Array;
};

export type RequestCheck =
  | { ok: true; identity: HubIdentity; body: Buffer }
  | { ok: false; failure: SignatureFailure }
  | { ok: false; failure: 'body_too_large' };

/**
 * Verifies a request whose body is already in hand. `purpose` is the purpose of the route the
 * caller matched (account routes only); it is never read from the request.
 */
export function checkSignedRequest(
  parts: SignedRequestParts,
  options: VerifyOptions,
  purpose?: SignaturePurpose,
): { ok: true; identity: HubIdentity } | { ok: false; failure: SignatureFailure } {
  const requestId = headerValue(parts.headers, HUB_HEADERS.requestId);
  // Every signed request carries a request id; without one there is nothing to bill or correlate.
  if (!requestId) return { ok: false, failure: 'missing_or_malformed_signature' };
  const result = verifySignature({
    header: parts.headers[HUB_HEADERS.signature],
    method: parts.method,
    pathAndQuery: parts.url,
    bodySha256: sha256Hex(parts.body),
    requestId,
    agentId: headerValue(parts.headers, HUB_HEADERS.agentId) || undefined,
    purpose,
    secretFor: secretLookup(options.secrets),
    now: options.now?.(),
    toleranceSeconds: options.toleranceSeconds,
  });
  if (!result.ok) return { ok: false, failure: result.reason };
  return { ok: true, identity: identityFrom(parts.headers, result) };
}

/** Reads the body from `stream`, then verifies. */
export async function readAndCheck(
  stream: Readable,
  request: Omit<SignedRequestParts, 'body'>,
  options: VerifyOptions,
  purpose?: SignaturePurpose,
): Promise<RequestCheck> {
  let body: Buffer;
  try {
    body = await readRawBody(stream, options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, headerValue(request.headers, 'content-length'));
  } catch (err) {
    if (err instanceof BodyTooLargeError) return { ok: false, failure: 'body_too_large' };
    throw err;
  }
  const checked = checkSignedRequest({ ...request, body }, options, purpose);
  return checked.ok ? { ...checked, body } : checked;
}
