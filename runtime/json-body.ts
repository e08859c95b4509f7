import type { IncomingMessage } from 'node:http';
import { ApiError } from '../shared/errors.js';
import { mediaTypeOf } from './media-type.js';
import { readBody } from './read-body.js';

/** Management requests are small; anything bigger than this is refused before it is parsed. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * No request hub takes nests deeper than a few levels; validation and routing code below this
 * reader recurses per level, so a body nested thousands deep would overflow its stack.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Reads a request body as a JSON object. An empty body is `{}` (actions such as rotate need
 * none); anything else must be `Content-Type: application/json` and a JSON object.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Record<string, unknown>> {
  return parseJsonBody(await readBody(req, limit), req.headers['content-type']);
}

/** `readJsonBody` for a body already read (where its bytes matter too, as a payment binds to them). */
export function parseJsonBody(raw: Buffer, contentType: string | undefined): Record<string, unknown> {
  const text = raw.toString('utf8');
  if (text.trim() === '') return {};

  if (mediaTypeOf(contentType) !== 'application/json') throw new ApiError('unsupported_media_type');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_request', 'The request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ApiError('invalid_request', 'The request body must be a JSON object');
  const refusal = unfitJson(parsed, 'The request body');
  if (refusal) throw new ApiError('invalid_request', refusal);
  return parsed as Record<string, unknown>;
}

/** A UTF-16 surrogate without its other half: JSON's \ud800 escapes can write one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * What makes parsed JSON (`subject`, for the message) unfit to pass on, walked without recursion:
 * nesting beyond MAX_JSON_DEPTH, NUL characters, which PostgreSQL cannot store in text (SQLite
 * can), and lone surrogates, which UTF-8 cannot encode: stored, two different strings would
 * both become U+FFFD. Refused the same on both databases.
 */
export function unfitJson(json: unknown, subject: string): string | undefined {
  const pending: [unknown, number][] = [[json, 1]];
  while (pending.length) {
    const [value, depth] = pending.pop()!;
    if (typeof value === 'string') {
      const refusal = unfitText(value, subject);
      if (refusal) return refusal;
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_JSON_DEPTH) return `${subject} nests deeper than ${MAX_JSON_DEPTH} levels`;
    for (const [key, child] of Object.entries(value)) {
      const refusal = unfitText(key, subject);
      if (refusal) return refusal;
      pending.push([child, depth + 1]);
    }
  }
  return undefined;
}

function unfitText(text: string, subject: string): string | undefined {
  if (text.includes('\u0000')) return `${subject} must not contain NUL characters`;
  if (LONE_SURROGATE.test(text)) return `${subject} must be well-formed Unicode (a lone surrogate is not)`;
  return undefined;
}
