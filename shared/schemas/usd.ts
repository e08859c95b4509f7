import { z } from 'zod';
import { formatUsd, parseUsd } from '../money.js';

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

export { formatUsd };
