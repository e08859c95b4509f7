import { isUsageQuantity } from './usage-quantity.js';

/**
 * The `hub-usage` response header (spec: Headers on proxied requests › Response from the seller's
 * API): a JSON array of `{ serviceSlug, meterSlug, quantity }`. The proxy reads it from every 2xx;
 * the SDK writes it (sdk/usage-header.ts).
 */
export type UsageHeaderItem = { serviceSlug: string; meterSlug: string; quantity: number };

/** Reads a `hub-usage` value; anything off the grammar is `ok: false` (never throws). */
export function parseUsageHeader(value: unknown): { ok: true; items: UsageHeaderItem[] } | { ok: false } {
  if (typeof value !== 'string') return { ok: false };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return { ok: false };
  }
  if (!Array.isArray(parsed)) return { ok: false };
  const items: UsageHeaderItem[] = [];
  for (const item of parsed as unknown[]) {
    if (typeof item !== 'object' || item === null) return { ok: false };
    const { serviceSlug, meterSlug, quantity } = item as Record<string, unknown>;
    if (typeof serviceSlug !== 'string' || !serviceSlug || typeof meterSlug !== 'string' || !meterSlug || !isUsageQuantity(quantity))
      return { ok: false };
    items.push({ serviceSlug, meterSlug, quantity });
  }
  return { ok: true, items };
}
