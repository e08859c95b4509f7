import { randomBytes } from 'node:crypto';

/**
 * Id prefixes. The first block is the spec's ("Id prefixes"); the second names hub's own
 * records that the spec does not show.
 */
export const idPrefixes = {
  seller: 'sel',
  service: 'svc',
  meter: 'mtr',
  plan: 'pln',
  planMeterPrice: 'pmp',
  apiKey: 'ak',
  signingSecret: 'hsec',
  agent: 'agt',
  buyer: 'byr',
  request: 'hubreq',
  usageEvent: 'use',
  access: 'hubacc',
  paymentAttempt: 'apay',

  organization: 'org',
  user: 'usr',
  membership: 'mem',
  session: 'ses',
  usageEventItem: 'usei',
  accountWrite: 'awr',
  pageView: 'pv',
  creditEntry: 'hcr',
  mail: 'mail',
  registrationChallenge: 'regc',
  agentClaim: 'clm',
  encryptionKey: 'hjwk',
  invitation: 'inv',
  passwordAttempt: 'pwa',
  sessionTransaction: 'stx',
} as const;

export type IdKind = keyof typeof idPrefixes;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const ID_RANDOM_LENGTH = 24;

/**
 * Random bytes are drawn from the OS 4 KiB at a time: an id per proxied request would otherwise
 * cost a system call each. The pool is consumed once, never reused.
 */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function nextRandomByte(): number {
  if (poolOffset >= pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** `length` characters of uniform base62 randomness (~5.95 bits each). */
export function randomBase62(length: number): string {
  return randomChars(ALPHABET, length);
}

/** Uniform characters of `alphabet`: bytes at or above the largest multiple of its size are discarded. */
function randomChars(alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    const b = nextRandomByte();
    if (b < limit) out += alphabet[b % alphabet.length];
  }
  return out;
}

/** A new id such as `sel_4fT0…` (prefix, underscore, 24 base62 characters: ~143 bits). */
export function newId(kind: IdKind): string {
  return `${idPrefixes[kind]}_${randomBase62(ID_RANDOM_LENGTH)}`;
}

const ID_BODY = /^[0-9A-Za-z]{24}$/;

/** True when `value` is a well-formed id of `kind`; use it to reject garbage before a lookup. */
export function isId(kind: IdKind, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const prefix = `${idPrefixes[kind]}_`;
  return value.startsWith(prefix) && ID_BODY.test(value.slice(prefix.length));
}

const DIGITS = ALPHABET.slice(0, 10);
const LETTERS = ALPHABET.slice(10);
const REQUEST_BODY_START = idPrefixes.request.length + 1;

/**
 * A request id that says whether the proxy stores a record for the request (an identified agent's
 * request) or not (an anonymous call, only counted): the first character after `hubreq_` is a digit
 * for the former, a letter for the latter, and the rest is random as in every id (~140 bits in
 * all). The proxy forwards an identified request without waiting for its record to be stored, so
 * a usage check that arrives first knows to wait for a record only when one is coming.
 */
export function newRequestId(recorded: boolean): string {
  const first = randomChars(recorded ? DIGITS : LETTERS, 1);
  return `${idPrefixes.request}_${first}${randomBase62(ID_RANDOM_LENGTH - 1)}`;
}

/** True for a request id the proxy minted for a request it records (see newRequestId). */
export function isRecordedRequestId(id: string): boolean {
  const c = id.charCodeAt(REQUEST_BODY_START);
  return isId('request', id) && c >= 48 && c <= 57;
}
