import { MAX_MICROS, MICROS_PER_CENT } from '../money.js';

/**
 * The card provider counts US dollars in whole cents (a JavaScript number on its wire); hub counts
 * micro-USD. Both ways are exact, and what does not convert exactly is refused, never rounded.
 */

/** A provider amount in cents as micro-USD; throws on a fraction, a negative or an unsafe number. */
export function centsToMicros(cents: unknown): bigint {
  if (typeof cents !== 'number' || !Number.isSafeInteger(cents) || cents < 0) {
    throw new RangeError(`a provider amount must be a whole, non-negative number of cents (got ${String(cents)})`);
  }
  const micros = BigInt(cents) * MICROS_PER_CENT;
  if (micros > MAX_MICROS) throw new RangeError('a provider amount is larger than hub counts');
  return micros;
}

/** Micro-USD as the provider's cents; throws unless it is a whole number of cents. */
export function microsToCents(micros: bigint): number {
  if (micros < 0n || micros % MICROS_PER_CENT !== 0n) throw new RangeError(`${micros} micro-USD is not a whole number of cents`);
  const cents = micros / MICROS_PER_CENT;
  if (cents > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('too many cents for the provider');
  return Number(cents);
}
