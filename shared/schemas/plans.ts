import { z } from 'zod';
import { MAX_USAGE_QUANTITY } from '../usage.js';
import { description, idSchema, name, slug, timestamp, usdInput, usdOutput, wholeNumber } from './fields.js';

/** Plans (spec: Resources › Plan) and their meter prices (Resources › Plan meter price). */

export const BILLING_MODES = ['payg', 'subscription', 'subscription_usage', 'credit'] as const;
export const INTERVALS = ['none', 'month', 'year'] as const;
export const VERIFIED_EMAIL_POLICIES = ['off', 'required', 'requested'] as const;
export const PLAN_KINDS = ['standard', 'free_trial'] as const;
/** What a second key mint does (spec: Mint rules): `rotating` replaces the key, `additive` adds one. */
export const REMINT_POLICIES = ['rotating', 'additive'] as const;

export type BillingMode = (typeof BILLING_MODES)[number];
export type Interval = (typeof INTERVALS)[number];
export type PlanKind = (typeof PLAN_KINDS)[number];

export const planId = idSchema('plan');

export const plan = z
  .object({
    id: planId,
    serviceId: idSchema('service'),
    name: z.string(),
    slug: z.string().meta({ description: 'Unique within the service' }),
    kind: z.enum(PLAN_KINDS).meta({ description: 'free_trial plans create an account without payment' }),
    billingMode: z.enum(BILLING_MODES),
    interval: z.enum(INTERVALS),
    basePriceUsd: usdOutput.meta({ description: 'What the plan charges per period' }),
    includedCreditUsd: usdOutput,
    includedCreditUnits: z.int(),
    includedCreditUnitLabel: z.string().nullable(),
    minimumPurchaseUsd: usdOutput.meta({ description: 'Smallest buyer-chosen purchase amount' }),
    verifiedEmailPolicy: z.enum(VERIFIED_EMAIL_POLICIES),
    remintPolicy: z
      .enum(REMINT_POLICIES)
      .meta({ description: 'Stateful sellers: rotating keeps one live key per account (maxKeys 1); additive adds one per mint' }),
    maxClaims: z.int().nullable().meta({ description: 'null: no limit' }),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Plan' });

const unitLabel = z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters');
const count = wholeNumber(0, MAX_USAGE_QUANTITY);

/** Fields a seller may set on create and change later. */
const editable = {
  name,
  slug,
  interval: z.enum(INTERVALS),
  basePriceUsd: usdInput,
  includedCreditUsd: usdInput,
  includedCreditUnits: count,
  includedCreditUnitLabel: unitLabel.nullable(),
  minimumPurchaseUsd: usdInput,
  verifiedEmailPolicy: z.enum(VERIFIED_EMAIL_POLICIES),
  remintPolicy: z.enum(REMINT_POLICIES),
  maxClaims: wholeNumber(1, MAX_USAGE_QUANTITY).nullable(),
};

export const createPlanInput = z.strictObject({
  serviceId: idSchema('service'),
  name: editable.name,
  slug: editable.slug,
  kind: z.enum(PLAN_KINDS).optional().meta({ description: 'Default standard' }),
  billingMode: z.enum(BILLING_MODES),
  interval: editable.interval.optional().meta({ description: 'Default month for subscriptions, none otherwise' }),
  basePriceUsd: editable.basePriceUsd.optional(),
  includedCreditUsd: editable.includedCreditUsd.optional(),
  includedCreditUnits: editable.includedCreditUnits.optional(),
  includedCreditUnitLabel: editable.includedCreditUnitLabel.optional(),
  minimumPurchaseUsd: editable.minimumPurchaseUsd.optional(),
  verifiedEmailPolicy: editable.verifiedEmailPolicy
    .optional()
    .meta({ description: 'Default required for free_trial plans, off otherwise' }),
  remintPolicy: editable.remintPolicy.optional().meta({ description: 'Default rotating' }),
  maxClaims: editable.maxClaims.optional(),
});

/** billingMode and kind are fixed at creation: buyers hold accounts under them. */
export const updatePlanInput = z.strictObject(editable).partial().extend({ planId });

export const planMeterPriceId = idSchema('planMeterPrice');

export const planMeterPrice = z
  .object({
    id: planMeterPriceId,
    planId,
    meter: z.object({ id: idSchema('meter'), key: z.string(), unit: z.string() }),
    priceUsd: usdOutput.meta({ description: 'Price of unitSize units' }),
    unitSize: z.int(),
    includedUnits: z.int(),
    defaultMaxQuantity: z.int().nullable(),
    description: z.string().nullable().meta({ description: 'A pricing note agents read beside the price in the discovery documents' }),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'PlanMeterPrice' });

const priceFields = {
  priceUsd: usdInput.meta({ description: 'Whole cents on payg plans; six decimals elsewhere', example: '0.010000' }),
  unitSize: wholeNumber(1, MAX_USAGE_QUANTITY),
  includedUnits: count,
  defaultMaxQuantity: wholeNumber(1, MAX_USAGE_QUANTITY).nullable(),
  description: description.min(1, 'must not be empty').nullable(),
};

export const createPlanMeterPriceInput = z.strictObject({
  planId,
  meterId: idSchema('meter'),
  priceUsd: priceFields.priceUsd,
  unitSize: priceFields.unitSize.optional().meta({ description: 'Default 1' }),
  includedUnits: priceFields.includedUnits.optional().meta({ description: 'Default 0' }),
  defaultMaxQuantity: priceFields.defaultMaxQuantity.optional(),
  description: priceFields.description.optional(),
});

export const updatePlanMeterPriceInput = z.strictObject(priceFields).partial().extend({ planMeterPriceId });
