import type { IncomingMessage } from 'node:http';
import { ApiError } from '../shared/errors.js';

const EMPTY = Buffer.alloc(0);

/**
 * Buffers a request body up to `limit` bytes (the proxy must have it whole: the signature covers
 * its SHA-256; the control-plane parses it). A declared or actual size over the limit is 413.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    throw new ApiError('payload_too_large', `Request bodies are limited to ${limit} bytes.`);
  }
  if (req.method === 'GET' || req.method === 'HEAD') {
    if (declared === undefined && req.headers['transfer-encoding'] === undefined) return EMPTY;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw new ApiError('payload_too_large', `Request bodies are limited to ${limit} bytes.`);
    }
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 1 ? chunks[0]! : chunks.length === 0 ? EMPTY : Buffer.concat(chunks, size);
}
