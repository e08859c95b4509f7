import { z } from 'zod';
import { type IdKind, idPrefixes } from '../ids.js';
import { parseUsd } from '../money.js';
import { SLUG_PATTERN } from '../pay-host.js';

/** Field formats the wire schemas share: ids, names and slugs, whole numbers, money, timestamps. */

const NAMES: Record<IdKind, string> = {
  seller: 'seller',
  service: 'service',
  meter: 'meter',
  plan: 'plan',
  planMeterPrice: 'plan meter price',
  apiKey: 'API key',
  signingSecret: 'signing secret',
  agent: 'agent',
  buyer: 'buyer',
  request: 'request',
  usageEvent: 'usage event',
  access: 'access',
  paymentAttempt: 'payment attempt',
  organization: 'organization',
  user: 'user',
  membership: 'membership',
  session: 'session',
  usageEventItem: 'usage event item',
  accountWrite: 'account write',
  pageView: 'page view',
  creditEntry: 'credit entry',
  mail: 'mail',
  registrationChallenge: 'registration challenge',
  agentClaim: 'agent claim',
  encryptionKey: 'encryption key',
  invitation: 'invitation',
  passwordAttempt: 'password attempt',
  sessionTransaction: 'session transaction',
};

/**
 * A well-formed id of one kind (`sel_` + 24 base62 characters). A malformed id never reaches a
 * lookup: it fails validation with a message that names the expected prefix.
 */
export function idSchema(kind: IdKind) {
  const prefix = idPrefixes[kind];
  return z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9A-Za-z]{24}$`), `must be a ${NAMES[kind]} id (${prefix}_…)`)
    .meta({ example: `${prefix}_0123456789abcdefghijklmn` });
}

/**
 * A display name: one line. Names reach mail hub sends (a claim names the seller), where a line
 * break would let a name write lines of its own under hub's address.
 */
export const name = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .regex(/^[^\p{Cc}\p{Zl}\p{Zp}]*$/u, 'must be one line, without control characters');

/** Seller, service and plan slugs: a DNS label (lowercase letters, digits, inner hyphens, ≤ 63). */
export const slug = z
  .string()
  .regex(SLUG_PATTERN, 'must be lowercase letters, digits and inner hyphens, at most 63 characters')
  .meta({ example: 'weather-api' });

/** Meter keys, named as `meterSlug` in usage items: a slug that may also hold `_` and `.`. */
export const meterKey = z
  .string()
  .regex(
    /^[a-z0-9](?:[a-z0-9._-]{0,62})$/,
    'must be lowercase letters, digits, ".", "_" or "-", at most 63 characters, starting with a letter or digit',
  )
  .meta({ example: 'requests' });

export const description = z.string().max(2000, 'must be at most 2000 characters');

/** `value` as an absolute URL, or undefined when it is not one. */
export function absoluteUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** An absolute http(s) URL without credentials, query or fragment, at most 2000 characters. */
export const httpUrl = z
  .string()
  .max(2000, 'must be at most 2000 characters')
  .refine((value) => {
    const url = absoluteUrl(value);
    if (!url) return false;
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password && !url.search && !url.hash;
  }, 'must be an absolute http(s) URL without credentials, query or fragment')
  .meta({ example: 'https://api.example.com/v2' });

/** An EVM address; kept lowercased so comparisons with payment payloads are exact. */
export const evmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
  .transform((value) => value.toLowerCase())
  .meta({ example: '0x1111111111111111111111111111111111111111' });

/** A CAIP-2 chain id such as `eip155:8453`. */
export const caip2Network = z
  .string()
  .regex(/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/, 'must be a CAIP-2 chain id such as eip155:8453')
  .meta({ example: 'eip155:8453' });

/** A hostname a seller points at its pay URL; lowercased, without port or trailing dot. */
export const hostname = z
  .string()
  .max(253, 'must be at most 253 characters')
  .transform((value) => value.toLowerCase().replace(/\.$/, ''))
  .pipe(
    z
      .string()
      .regex(
        /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/,
        'must be a hostname such as pay.example.com',
      )
      // An IP literal can never route by Host to a seller; no top-level domain is all digits.
      .refine((host) => /[a-z-]/.test(host.slice(host.lastIndexOf('.') + 1)), 'must be a hostname, not an IP address'),
  )
  .meta({ example: 'pay.example.com' });

/** A list without repeated entries, at most `max` long. */
export function distinctList<T extends z.ZodType<string, string>>(item: T, max: number) {
  return z
    .array(item)
    .max(max, `must hold at most ${max} entries`)
    .refine((values) => new Set(values).size === values.length, 'must not repeat an entry');
}

/**
 * A whole number in a JSON body, checked strictly: `"5"`, `true` or `[]` are refused.
 *
 * trpc-to-openapi coerces every number schema it can reach in an input object (it was made for
 * query strings, where everything is text), and it does so for JSON bodies too: `true` would
 * become 1. It does not look inside a pipe, so the number is wrapped in one.
 */
export function wholeNumber(min: number, max: number) {
  return z.int().min(min).max(max).pipe(z.int());
}

/** A boolean in a JSON body, checked strictly (`"false"` would otherwise be coerced to true): see wholeNumber. */
export function jsonBoolean() {
  return z.boolean().pipe(z.boolean());
}

/**
 * Money on the wire. Requests carry a non-negative decimal string of USD with up to six decimals
 * and are parsed into micro-USD (`bigint`); responses always carry six decimals.
 */
export const usdInput = z
  .string()
  .meta({ description: 'USD as a decimal string, up to six decimals', example: '0.010000' })
  .transform((value, ctx) => {
    const parsed = parseUsd(value);
    if (!parsed.ok) {
      ctx.addIssue({ code: 'custom', message: parsed.reason });
      return z.NEVER;
    }
    return parsed.micros;
  });

export const usdOutput = z
  .string()
  .regex(/^-?[0-9]+\.[0-9]{6}$/)
  .meta({ description: 'USD as a decimal string with six decimals', example: '0.010000' });

/** A UTC timestamp in ISO 8601, as every response carries them (`2025-01-31T12:00:00.000Z`). */
export const timestamp = z.string().meta({ format: 'date-time', example: '2025-01-31T12:00:00.000Z' });

export function toTimestamp(date: Date): string {
  return date.toISOString();
}

export function toTimestampOrNull(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}
