import { z } from 'zod';
import { idSchema, usdOutput, wholeNumber } from '../../shared/schemas/fields.js';
import { MAX_USAGE_QUANTITY, USAGE_DENIALS } from '../../shared/usage.js';

/**
 * Wire shapes of the usage endpoints (spec: Endpoints › Usage check, Usage report). Slugs are
 * taken as any short string: one that names nothing is a denial (`service_not_found`,
 * `meter_not_found`), not a malformed body.
 */

const MAX_ITEMS = 100;
const quantity = wholeNumber(0, MAX_USAGE_QUANTITY);
const reference = (what: string) => z.string().min(1, 'must not be empty').max(200, `${what} must be at most 200 characters`);

const requestFields = {
  zcRequestId: reference('zcRequestId').meta({
    description: 'The hub-request-id header of the request, passed through unchanged',
    example: 'hubreq_0123456789abcdefghijklmn',
  }),
  serviceSlug: reference('serviceSlug').meta({ example: 'forecast' }),
};

export const checkItem = z
  .strictObject({
    meterSlug: reference('meterSlug').meta({ example: 'requests' }),
    quantity: quantity.nullish().meta({ description: 'Units the request will use' }),
    maxQuantity: quantity.nullish().meta({ description: 'At most this many units; checked instead of quantity when given' }),
  })
  .refine(
    (item) => item.quantity == null || item.maxQuantity == null || item.quantity <= item.maxQuantity,
    'quantity must not exceed maxQuantity',
  );

export const checkUsageInput = z.strictObject({
  ...requestFields,
  usage: z.array(checkItem).max(MAX_ITEMS, `must hold at most ${MAX_ITEMS} items`),
});
export type CheckUsageInput = z.infer<typeof checkUsageInput>;

export const checkUsageOutput = z.object({
  allowed: z.boolean(),
  reason: z.enum(USAGE_DENIALS).nullable().meta({ description: 'null when allowed; otherwise the first denial in order of precedence' }),
});
export type CheckUsageOutput = z.infer<typeof checkUsageOutput>;

export const reportItem = z.strictObject({
  meterSlug: reference('meterSlug').meta({ example: 'requests' }),
  quantity,
});

export const reportUsageInput = z.strictObject({
  idempotencyKey: z
    .string()
    .min(1, 'must not be empty')
    .max(255, 'must be at most 255 characters')
    .meta({ description: 'A replay with the same body returns the first answer with duplicate: true' }),
  ...requestFields,
  usage: z.array(reportItem).min(1, 'must hold at least one item').max(MAX_ITEMS, `must hold at most ${MAX_ITEMS} items`),
});
export type ReportUsageInput = z.infer<typeof reportUsageInput>;

export const reportUsageOutput = z.object({
  id: idSchema('usageEvent'),
  duplicate: z.boolean().meta({ description: 'true when the idempotency key was recorded before; nothing changed' }),
  costUsd: usdOutput.meta({ description: 'What the usage cost beyond included units, at the price of the plan or payment behind it' }),
});
export type ReportUsageOutput = z.infer<typeof reportUsageOutput>;
