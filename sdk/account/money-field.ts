import { z } from 'zod';
import { usdToMicros } from '../../shared/money.js';

/**
 * Money in account writes: a decimal string with exactly six decimals (spec: Account write
 * handling rules, 3), read into integer micro-USD through shared/money.
 */
export const sixDecimalUsd = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,11})\.[0-9]{6}$/, 'must be a USD amount with exactly six decimals, such as "5.000000"')
  .transform((value) => usdToMicros(value));

/** An ISO 8601 timestamp (UTC `Z` or an explicit offset). */
export const timestamp = z.iso.datetime({ offset: true });
