/**
 * The HTTP authentication grammar (RFC 9110 §11) that `WWW-Authenticate: Payment …` is written in:
 * a list of challenges, each a scheme followed by `name="value"` auth-params or a token68.
 *
 * The scanner walks the whole header once, left to right, so a scheme name inside a quoted value
 * or a parameter called `payment` is never mistaken for the start of a challenge. It is total and
 * linear in the input; inputs longer than `MAX_AUTH_HEADER_LENGTH` are refused up front.
 *
 * Quoted values are written with `\uXXXX` for every character outside printable ASCII, as mppx
 * writes them, so a header value stays a legal ByteString; the reader undoes it, and undoes the
 * plain RFC quoted-pair (`\"`, `\\`) as well.
 */

export type AuthChallenge = {
  /** As written; compare case-insensitively. */
  scheme: string;
  /** Lowercased names. Empty for a scheme without parameters or with a token68. */
  params: Record<string, string>;
  token68?: string;
};

export type AuthParamsFailure = 'malformed_auth_header';

export const MAX_AUTH_HEADER_LENGTH = 64 * 1024;

const TCHAR = /[!#$%&'*+.^_`|~0-9A-Za-z-]/;
const TOKEN68_CHAR = /[A-Za-z0-9._~+/-]/;
const WHITESPACE = /[ \t]/;

type Scan<T> = { value: T; end: number } | undefined;

function skip(input: string, pos: number, chars: RegExp): number {
  while (pos < input.length && chars.test(input[pos]!)) pos++;
  return pos;
}

function readToken(input: string, pos: number): Scan<string> {
  const end = skip(input, pos, TCHAR);
  return end > pos ? { value: input.slice(pos, end), end } : undefined;
}

/** A token68 is only one when nothing but whitespace separates it from a comma or the end. */
function readToken68(input: string, pos: number): Scan<string> {
  let end = skip(input, pos, TOKEN68_CHAR);
  if (end === pos) return undefined;
  end = skip(input, end, /=/);
  const after = skip(input, end, WHITESPACE);
  if (after < input.length && input[after] !== ',') return undefined;
  return { value: input.slice(pos, end), end };
}

function readQuoted(input: string, pos: number): Scan<string> {
  let out = '';
  let i = pos + 1;
  while (i < input.length) {
    const char = input[i]!;
    const code = char.charCodeAt(0);
    if (char === '"') return { value: out, end: i + 1 };
    // qdtext excludes control characters other than tab.
    if ((code < 0x20 && char !== '\t') || code === 0x7f) return undefined;
    if (char !== '\\') {
      out += char;
      i++;
      continue;
    }
    const next = input[i + 1];
    if (next === undefined) return undefined;
    const hex = input.slice(i + 2, i + 6);
    if (next === 'u' && /^[0-9A-Fa-f]{4}$/.test(hex)) {
      out += String.fromCharCode(Number.parseInt(hex, 16));
      i += 6;
    } else {
      out += next;
      i += 2;
    }
  }
  return undefined;
}

/** Every challenge in a `WWW-Authenticate` value, or undefined when the value breaks the grammar. */
export function parseAuthChallenges(input: unknown): AuthChallenge[] | undefined {
  if (typeof input !== 'string' || input.length > MAX_AUTH_HEADER_LENGTH) return undefined;
  const challenges: AuthChallenge[] = [];
  let pos = skip(input, 0, /[ \t,]/);
  while (pos < input.length) {
    const scheme = readToken(input, pos);
    if (!scheme) return undefined;
    pos = scheme.end;
    if (pos < input.length && !WHITESPACE.test(input[pos]!) && input[pos] !== ',') return undefined;
    const challenge: AuthChallenge = { scheme: scheme.value, params: Object.create(null) as Record<string, string> };
    challenges.push(challenge);
    pos = skip(input, pos, WHITESPACE);

    const token68 = readToken68(input, pos);
    if (token68) {
      challenge.token68 = token68.value;
      pos = token68.end;
    } else {
      const end = readParams(input, pos, challenge.params);
      if (end === undefined) return undefined;
      pos = end;
    }
    pos = skip(input, pos, /[ \t,]/);
  }
  return challenges;
}

/**
 * Reads `name = value` pairs separated by commas into `into`, stopping before a token that is not
 * followed by `=` (the next challenge's scheme). Returns where it stopped, or undefined on junk.
 */
function readParams(input: string, start: number, into: Record<string, string>): number | undefined {
  let pos = start;
  for (;;) {
    pos = skip(input, pos, /[ \t,]/);
    const name = readToken(input, pos);
    if (!name) return pos;
    const equals = skip(input, name.end, WHITESPACE);
    if (input[equals] !== '=') return pos;
    const valueStart = skip(input, equals + 1, WHITESPACE);
    const value = input[valueStart] === '"' ? readQuoted(input, valueStart) : readToken(input, valueStart);
    if (!value) return undefined;
    const key = name.value.toLowerCase();
    if (Object.hasOwn(into, key)) return undefined;
    into[key] = value.value;
    pos = skip(input, value.end, WHITESPACE);
    if (pos < input.length && input[pos] !== ',') return undefined;
  }
}

/** `name="value"`, escaped so that any string survives a round trip through a header. */
export function formatAuthParam(name: string, value: string): string {
  let escaped = '';
  for (let i = 0; i < value.length; i++) {
    const char = value[i]!;
    const code = value.charCodeAt(i);
    if (char === '"' || char === '\\') escaped += `\\${char}`;
    else if (code >= 0x20 && code < 0x7f) escaped += char;
    // Code units, not code points: a surrogate pair becomes two escapes, which the reader rejoins.
    else escaped += `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return `${name}="${escaped}"`;
}
