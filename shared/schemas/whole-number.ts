import { z } from 'zod';

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

/** The largest quantity the spec allows anywhere (usage items, `hub-usage`): 2,147,483,647. */
export const MAX_QUANTITY = 2_147_483_647;
