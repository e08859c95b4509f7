/**
 * Money: integer micro-USD (`bigint`, 1 USD = 1,000,000) inside hub; decimal strings only at
 * the edges. Nothing here ever touches a JavaScript number for an amount.
 *
 * Rounding rules (also in docs/decisions.md):
 * - Parsing never rounds: more than six decimals is refused, so what a caller wrote is what we keep.
 * - Formatting is exact: always six decimals (`1.500000`).
 * - Costs computed from quantities round up to the next whole micro-USD (`mulDivCeil`), so a
 *   seller is never paid less than its price; per-call (payg) prices are whole cents already.
 * - Converting to a token's atomic units rounds up for tokens with fewer than six decimals
 *   (the payer covers the price), and is exact otherwise.
 */

export const MICROS_PER_USD = 1_000_000n;
export const MICROS_PER_CENT = 10_000n;
/** Largest amount accepted at the edge: 999,999,999,999.999999 USD fits a signed 64-bit column. */
export const MAX_MICROS = 999_999_999_999_999_999n;

const DECIMAL = /^(0|[1-9][0-9]{0,11})(?:\.([0-9]{1,6}))?$/;

export type MoneyParseResult = { ok: true; micros: bigint } | { ok: false; reason: string };

/**
 * Parses a non-negative USD decimal string (`"12"`, `"0.5"`, `"0.000001"`) into micro-USD.
 * Refuses signs, exponents, spaces, more than six decimals and more than twelve integer digits.
 */
export function parseUsd(value: unknown): MoneyParseResult {
  if (typeof value !== 'string') return { ok: false, reason: 'must be a decimal string of USD' };
  const match = DECIMAL.exec(value);
  if (!match) {
    return {
      ok: false,
      reason: /\.[0-9]{7,}$/.test(value)
        ? 'has more than six decimal places'
        : 'must be a non-negative decimal string of USD such as "1.25"',
    };
  }
  const whole = BigInt(match[1]!);
  const fraction = BigInt((match[2] ?? '').padEnd(6, '0'));
  return { ok: true, micros: whole * MICROS_PER_USD + fraction };
}

/** Like `parseUsd` but throws a `RangeError`; for values already validated by a schema. */
export function usdToMicros(value: string): bigint {
  const parsed = parseUsd(value);
  if (!parsed.ok) throw new RangeError(`"${value}" ${parsed.reason}`);
  return parsed.micros;
}

/** Formats micro-USD as a six-decimal string: 1500000n → "1.500000", -1n → "-0.000001". */
export function formatUsd(micros: bigint): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / MICROS_PER_USD;
  const fraction = (abs % MICROS_PER_USD).toString().padStart(6, '0');
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}

export function isWholeCents(micros: bigint): boolean {
  return micros % MICROS_PER_CENT === 0n;
}

/** ceil(a * b / c) for non-negative a, b and positive c, exactly. */
export function mulDivCeil(a: bigint, b: bigint, c: bigint): bigint {
  if (a < 0n || b < 0n || c <= 0n) throw new RangeError('mulDivCeil expects a, b >= 0 and c > 0');
  const product = a * b;
  return (product + c - 1n) / c;
}

/** ceil(a / b) for non-negative a and positive b. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return mulDivCeil(a, 1n, b);
}

/**
 * Cost of `quantity` units at `priceMicros` per `unitSize` units: quantity is first rounded up to
 * whole unit blocks (3 calls at $0.01 per 10 calls cost $0.01), then priced; at most MAX_MICROS.
 */
export function costOf(quantity: bigint, priceMicros: bigint, unitSize: bigint): bigint {
  return minMicros(ceilDiv(quantity, unitSize) * priceMicros, MAX_MICROS);
}

/**
 * The sum of costs, at most MAX_MICROS: a cost beyond the largest amount hub represents (and a
 * 64-bit column stores) counts as that amount. No credit or authorization comes near it.
 */
export function sumMicros(values: Iterable<bigint>): bigint {
  let sum = 0n;
  for (const value of values) sum += value;
  return minMicros(sum, MAX_MICROS);
}

/** micro-USD to a token's atomic units (USDC has 6 decimals, so it is the identity there). */
export function microsToTokenUnits(micros: bigint, decimals: number): bigint {
  if (decimals >= 6) return micros * 10n ** BigInt(decimals - 6);
  return ceilDiv(micros, 10n ** BigInt(6 - decimals));
}

/** A token's atomic units to micro-USD, rounding down (what was received, never more). */
export function tokenUnitsToMicros(units: bigint, decimals: number): bigint {
  if (decimals >= 6) return units / 10n ** BigInt(decimals - 6);
  return units * 10n ** BigInt(6 - decimals);
}

export function minMicros(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
