/**
 * The HTTP authentication grammar (RFC 9110 §11) that `WWW-Authenticate: Payment …` is written in:
 * a list of challenges, each a scheme followed by `name="value"` auth-params or a token68.
 *
 * The scanner walks the whole header once, left to right, so a scheme name inside a quoted value
 * or a parameter called `payment` is never mistaken for the start of a challenge. It is total and
 * linear in the input; inputs longer than `MAX_AUTH_HEADER_LENGTH` are refused up front.
 *
 * Quoted values follow RFC 9110 both ways: `"` and `\` go out as quoted-pairs, tabs and printable
 * ASCII as themselves, and other characters as bytes (obs-text): ISO-8859-1 when each fits in
 * one, as readers that decode header bytes as ISO-8859-1 (fetch, Node, mppx) show them, else
 * UTF-8, which the reader here decodes. A quoted-pair stands for
 * the character after the backslash, so `\u00e9` reads as `u00e9`, as every RFC reader takes it.
 * Control characters other than tab cannot be carried in a header at all and are refused.
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
  let bytes = false;
  while (i < input.length) {
    let char = input[i]!;
    if (char === '"') return { value: bytes ? utf8OrAsIs(out) : out, end: i + 1 };
    if (char === '\\') {
      i++;
      if (i === input.length) return undefined;
      char = input[i]!;
    }
    const code = char.charCodeAt(0);
    // qdtext and quoted-pair both exclude control characters other than tab.
    if ((code < 0x20 && char !== '\t') || code === 0x7f) return undefined;
    if (code >= 0x80) bytes = true;
    out += char;
    i++;
  }
  return undefined;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** obs-text arrives as one character per byte: UTF-8 when it decodes as UTF-8, else as it came. */
function utf8OrAsIs(text: string): string {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) return text;
  try {
    return strictUtf8.decode(Buffer.from(text, 'latin1'));
  } catch {
    return text;
  }
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

/**
 * `name="value"` as an RFC 9110 quoted-string, in the one-character-per-byte form a header value
 * takes. Throws on a control character other than tab, which no header can carry.
 */
export function formatAuthParam(name: string, value: string): string {
  const text = asHeaderBytes(value);
  let quoted = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    const code = text.charCodeAt(i);
    if (char === '"' || char === '\\') quoted += `\\${char}`;
    else if (code >= 0x20 && code !== 0x7f) quoted += char;
    else if (char === '\t') quoted += char;
    else throw new TypeError(`${name} holds a control character, which a header cannot carry`);
  }
  return `${name}="${quoted}"`;
}

/** Whether a header can carry `value`: no control characters but tab. */
export function isHeaderText(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return false;
  }
  return true;
}

/**
 * A value as header bytes, one character per byte: ISO-8859-1 when every character fits in a
 * byte (what fetch and Node readers show as the same characters), else UTF-8. Whichever is
 * written, `utf8OrAsIs` reads the value back: ISO-8859-1 text that would read as UTF-8 is sent
 * as UTF-8 too.
 */
function asHeaderBytes(value: string): string {
  let wide = false;
  let high = false;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code > 0xff) wide = true;
    else if (code >= 0x80) high = true;
  }
  if (!wide && !high) return value;
  if (!wide && utf8OrAsIs(value) === value) return value;
  return Buffer.from(value, 'utf8').toString('latin1');
}
