import { ApiError } from './errors.js';

/**
 * Usage on the wire, as the spec defines it for every side: quantities and their limits, the
 * `hub-usage` header, and the reasons usage is denied.
 */

/** Usage quantities are integers from 0 to 2,147,483,647 (spec: Limits › Usage quantity). */
export const MAX_USAGE_QUANTITY = 2_147_483_647;

/** At most this many items in one usage report, check, `hub-usage` header or 402 body. */
export const MAX_USAGE_ITEMS = 100;

/** Service, meter and plan slugs are at most this long wherever usage names them. */
export const MAX_SLUG_LENGTH = 200;

export function isUsageQuantity(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_USAGE_QUANTITY;
}

/** Throws a `RangeError` naming `what` unless `value` is a usage quantity. */
export function assertUsageQuantity(value: unknown, what: string): asserts value is number {
  if (!isUsageQuantity(value)) throw new RangeError(`${what} must be an integer from 0 to ${MAX_USAGE_QUANTITY}, got ${String(value)}`);
}

export function isUsageSlug(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_SLUG_LENGTH;
}

export function assertSlug(value: unknown, what: string): asserts value is string {
  if (!isUsageSlug(value)) throw new TypeError(`${what} must be a string of 1 to ${MAX_SLUG_LENGTH} characters`);
}

/** Throws a `RangeError` naming `what` when `items` holds more than a usage input may. */
export function assertUsageItems(items: readonly unknown[], what: string): void {
  if (items.length > MAX_USAGE_ITEMS) throw new RangeError(`${what} holds at most ${MAX_USAGE_ITEMS} items, got ${items.length}`);
}

/**
 * The `hub-usage` response header (spec: Headers on proxied requests › Response from the seller's
 * API): a JSON array of `{ serviceSlug, meterSlug, quantity }`. The proxy reads it from every 2xx;
 * the SDK writes it (sdk/usage-header.ts).
 */
export type UsageHeaderItem = { serviceSlug: string; meterSlug: string; quantity: number };

/**
 * Reads a `hub-usage` value; anything off the grammar, or past the limits every usage input has
 * (items, slug lengths), is `ok: false` (never throws).
 */
export function parseUsageHeader(value: unknown): { ok: true; items: UsageHeaderItem[] } | { ok: false } {
  if (typeof value !== 'string') return { ok: false };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return { ok: false };
  }
  if (!Array.isArray(parsed) || parsed.length > MAX_USAGE_ITEMS) return { ok: false };
  const items: UsageHeaderItem[] = [];
  for (const item of parsed as unknown[]) {
    if (typeof item !== 'object' || item === null) return { ok: false };
    const { serviceSlug, meterSlug, quantity } = item as Record<string, unknown>;
    if (!isUsageSlug(serviceSlug) || !isUsageSlug(meterSlug) || !isUsageQuantity(quantity)) return { ok: false };
    items.push({ serviceSlug, meterSlug, quantity });
  }
  return { ok: true, items };
}

/**
 * The seven reasons a usage check can deny (spec: Errors › Usage endpoints), listed in their order
 * of precedence: when several apply, the one earliest in this list is the answer. A report fails
 * with the same code (as its HTTP error) wherever a check would have denied, and the proxy puts
 * the same code in `hub-usage-error` when usage it captured from `hub-usage` is refused.
 *
 * The order follows the spec's table and the way a request is resolved: first what the seller
 * named (the service), then who stands behind the request and in what state (access, its start
 * and its period), then the items (meter, price) and last whether they fit (allowance).
 */
export const USAGE_DENIALS = [
  'service_not_found',
  'access_not_found',
  'access_inactive',
  'plan_expired',
  'meter_not_found',
  'meter_not_priced',
  'usage_exhausted',
] as const;

export type UsageDenial = (typeof USAGE_DENIALS)[number];

export function isUsageDenial(code: string): code is UsageDenial {
  return (USAGE_DENIALS as readonly string[]).includes(code);
}

/**
 * What `hub-usage-error` says when recording usage captured from `hub-usage` failed with `err`: a
 * usage denial's own code, `settlement_failed` for any other refusal and for a failure that is no
 * refusal at all or a control-plane that could not answer (which `unexpected` is told of).
 */
export function usageErrorOf(err: unknown, unexpected: (err: unknown) => void): string {
  if (err instanceof ApiError && isUsageDenial(err.code)) return err.code;
  if (!(err instanceof ApiError) || err.status >= 500) unexpected(err);
  return 'settlement_failed';
}
