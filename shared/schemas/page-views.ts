import { z } from 'zod';
import { idSchema, wholeNumber } from './fields.js';

/** A finite non-negative number in a JSON body, never coerced from a string (see wholeNumber). */
const milliseconds = z.number().min(0).max(86_400_000).pipe(z.number());

/**
 * ISO 8601 reaches back past year 0 (an offset can take 0000-01-01 there); PostgreSQL's driver
 * writes such dates in a form it then refuses, which would hold up the batch the view is in.
 */
function inStoredYears(value: string): boolean {
  const at = Date.parse(value);
  return at >= Date.UTC(1970, 0, 1) && at < Date.UTC(10_000, 0, 1);
}

/** The page-view report (spec: Page-view report request body). Unknown fields are refused, as everywhere. */
export const pageViewInput = z.strictObject({
  seller: idSchema('seller').meta({ description: 'The seller whose site served the page' }),
  path: z.string().min(1).max(2048).startsWith('/', 'must start with /').meta({ description: 'Query string and fragment are dropped' }),
  status: wholeNumber(100, 599).optional(),
  durationMs: milliseconds.optional(),
  capturedAt: z.iso
    .datetime({ offset: true })
    .refine(inStoredYears, 'must fall in the years 1970 to 9999 (UTC)')
    .optional()
    .meta({ description: 'Never invented: omit it if unknown' }),
  journeyId: z.string().min(1).max(200).optional(),
  userAgent: z.string().max(2048).optional().meta({ description: 'The visitor’s; used to classify and identify the viewer, never stored' }),
  accept: z.string().max(2048).optional(),
  clientIp: z
    .string()
    .max(100)
    .optional()
    .meta({ description: 'The visitor’s; hashed with the user agent into a viewer id, never stored' }),
  country: z.string().max(64).optional().meta({ description: 'Clamped to a two-letter code; sentinels such as XX are dropped' }),
  referrerHost: z.string().max(2048).optional().meta({ description: 'A full URL is reduced to its host' }),
});
export type PageViewInput = z.infer<typeof pageViewInput>;
