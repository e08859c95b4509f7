import type { IncomingMessage } from 'node:http';
import { ApiError } from '../shared/errors.js';
import { readBody } from './read-body.js';

/** Management requests are small; anything bigger than this is refused before it is parsed. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Reads a request body as a JSON object. An empty body is `{}` (actions such as rotate need
 * none); anything else must be `Content-Type: application/json` and a JSON object.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Record<string, unknown>> {
  const text = (await readBody(req, limit)).toString('utf8');
  if (text.trim() === '') return {};

  const mediaType = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') throw new ApiError('unsupported_media_type');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw ApiError.validation('The request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw ApiError.validation('The request body must be a JSON object');
  return parsed as Record<string, unknown>;
}
