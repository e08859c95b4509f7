import type { ServerResponse } from 'node:http';
import { ApiError, type ErrorBody, errorResponse } from '../shared/errors.js';

/** Writes a JSON body (bigints are refused by JSON.stringify: money leaves as strings). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload).toString(),
    ...headers,
  });
  res.end(payload);
}

/** The spec's `{ error, reason? }` envelope for anything thrown; non-ApiErrors become a bare 500. */
export function sendError(res: ServerResponse, err: unknown): { status: number; body: ErrorBody } {
  const { status, body } = errorResponse(err);
  // A refusal that says when to come back says it in the standard header too.
  const retryAfter = typeof body.retryAfterSeconds === 'number' ? { 'retry-after': String(body.retryAfterSeconds) } : undefined;
  const headers = err instanceof ApiError ? { ...err.headers, ...retryAfter } : retryAfter;
  if (!res.headersSent) sendJson(res, status, body, headers);
  else res.destroy();
  return { status, body };
}
