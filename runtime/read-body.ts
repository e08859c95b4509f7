import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { ApiError } from '../shared/errors.js';
import type { RequestView } from './request-view.js';

export const EMPTY_BODY = Buffer.alloc(0);

/** A GET or HEAD that declares no body (the common case, answered without waiting for the stream). */
export function hasNoBody(req: RequestView): boolean {
  return (
    (req.method === 'GET' || req.method === 'HEAD') &&
    req.headers['content-length'] === undefined &&
    req.headers['transfer-encoding'] === undefined
  );
}

/**
 * Buffers a request body up to `limit` bytes (the proxy must have it whole: the signature covers
 * its SHA-256; the control-plane parses it). A declared or actual size over the limit is 413; the
 * rest of such a body is read and dropped (within the request's time limit), so the connection
 * stays in step for the answer and whatever request follows.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    return Promise.reject(tooLarge(limit));
  }
  if (hasNoBody(req)) return Promise.resolve(EMPTY_BODY);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: () => void) => {
      req.off('data', onData).off('end', onEnd).off('error', onCut).off('close', onCut);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      settle(() => reject(tooLarge(limit)));
      // Still flowing, with no one listening: the rest is dropped as it comes.
      req.resume();
    };
    const onEnd = () =>
      settle(() => resolve(chunks.length === 1 ? chunks[0]! : chunks.length === 0 ? EMPTY_BODY : Buffer.concat(chunks, size)));
    // The connection ended mid-body: the client left, or was cut off for being too slow.
    const onCut = () => settle(() => reject(new ApiError('invalid_request', 'The request body ended before it was complete.')));
    req.on('data', onData).once('end', onEnd).once('error', onCut).once('close', onCut);
  });
}

function tooLarge(limit: number): ApiError {
  return new ApiError('payload_too_large', `Request bodies are limited to ${limit} bytes.`);
}

/**
 * Reads a response body (a seller's answer, which hub never trusts to be small) up to `limit`
 * bytes. Past the limit the stream is destroyed and the first `limit` bytes are returned, marked
 * incomplete, so the caller decides whether a cut body is of any use.
 */
export function readUpTo(body: Readable, limit: number): Promise<{ bytes: Buffer; complete: boolean }> {
  // Events rather than an async iterator: on a hot path (every encrypted answer) the iterator's
  // promise per chunk is measurable.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const whole = () => (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    body.on('data', (chunk: Buffer) => {
      if (size + chunk.length > limit) {
        body.destroy();
        // The head of the crossing chunk too, so `bytes` is the body's first `limit` bytes.
        if (size < limit) chunks.push(chunk.subarray(0, limit - size));
        size = limit;
        resolve({ bytes: whole(), complete: false });
        return;
      }
      size += chunk.length;
      chunks.push(chunk);
    });
    body.once('end', () => resolve({ bytes: whole(), complete: true }));
    body.once('error', reject);
    // Destroyed without an error or an end: what a for-await loop reports as closed too early.
    body.once('close', () => {
      if (!body.readableEnded) reject(Object.assign(new Error('the body closed before it ended'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}

/** A response body hub will not read: closed, and the abort error undici raises for it heard and dropped. */
export function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}
