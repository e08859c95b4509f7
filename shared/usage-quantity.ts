/** Usage quantities are integers from 0 to 2,147,483,647 (spec: Limits › Usage quantity). */
export const MAX_USAGE_QUANTITY = 2_147_483_647;

export function isUsageQuantity(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_USAGE_QUANTITY;
}

/** Throws a `RangeError` naming `what` unless `value` is a usage quantity. */
export function assertUsageQuantity(value: unknown, what: string): asserts value is number {
  if (!isUsageQuantity(value)) throw new RangeError(`${what} must be an integer from 0 to ${MAX_USAGE_QUANTITY}, got ${String(value)}`);
}

export function assertSlug(value: unknown, what: string): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`${what} must be a non-empty string`);
}
