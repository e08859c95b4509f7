/**
 * The two encodings every MPP header is made of: base64url (RFC 4648 §5, unpadded on output) and
 * canonical JSON (RFC 8785 key order, no whitespace). Decoders are total: any input gives a value
 * or `undefined`, never an exception, because they run on headers an agent wrote.
 */

/** A decoded result or the reason it could not be decoded. */
export type Parsed<T, R extends string = string> = { ok: true; value: T } | { ok: false; reason: R; detail: string };

export function parsed<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

export function failed<R extends string>(reason: R, detail: string): { ok: false; reason: R; detail: string } {
  return { ok: false, reason, detail };
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function base64urlEncode(data: string | Uint8Array): string {
  return Buffer.from(typeof data === 'string' ? Buffer.from(data, 'utf8') : data).toString('base64url');
}

/**
 * Strict base64url: only the URL-safe alphabet, padding optional but correct when present, and
 * no stray bits in the last character. Node's own decoder skips junk silently, so two different
 * header values could otherwise decode to the same bytes.
 */
export function base64urlDecode(text: string): Uint8Array | undefined {
  const unpadded = text.endsWith('==') ? text.slice(0, -2) : text.endsWith('=') ? text.slice(0, -1) : text;
  if (unpadded !== text && text.length % 4 !== 0) return undefined;
  if (!BASE64URL.test(unpadded) || unpadded.length % 4 === 1) return undefined;
  const bytes = Buffer.from(unpadded, 'base64url');
  if (bytes.toString('base64url') !== unpadded) return undefined;
  return bytes;
}

/** base64url → UTF-8 → JSON, or undefined when any step fails. */
export function decodeBase64urlJson(text: string): unknown {
  const bytes = base64urlDecode(text);
  if (!bytes) return undefined;
  try {
    return JSON.parse(utf8.decode(bytes)) as unknown;
  } catch {
    return undefined;
  }
}

// Deep enough for any request hub or mppx writes; a bound keeps hostile nesting off the stack.
const MAX_DEPTH = 16;

/**
 * Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, `undefined` members
 * dropped (as `JSON.stringify` drops them). The challenge id is an HMAC over the canonical form,
 * so the same request always binds to the same bytes whoever re-serializes it. Undefined for
 * values JSON cannot carry (bigint, functions, non-finite numbers) or nesting beyond the bound.
 */
export function canonicalJson(value: unknown, depth = 0): string | undefined {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : undefined;
  if (typeof value !== 'object' || depth >= MAX_DEPTH) return undefined;
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (const item of value) {
      const encoded = canonicalJson(item, depth + 1);
      if (encoded === undefined) return undefined;
      items.push(encoded);
    }
    return `[${items.join(',')}]`;
  }
  const members: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined) continue;
    const encoded = canonicalJson(member, depth + 1);
    if (encoded === undefined) return undefined;
    members.push(`${JSON.stringify(key)}:${encoded}`);
  }
  return `{${members.join(',')}}`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 date-time that names a real instant (`expires`, receipt `timestamp`). */
export function isDatetime(value: unknown): value is string {
  return typeof value === 'string' && DATETIME.test(value) && Number.isFinite(Date.parse(value));
}
