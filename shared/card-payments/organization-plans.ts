import { z } from 'zod';
import { isWholeCents, parseUsd } from '../money.js';

/**
 * The plans hub itself sells to organizations (bought with a card through the provider's checkout,
 * docs/decisions.md#D-240), from HUB_ORGANIZATION_PLANS: a JSON array, or the defaults below.
 */
export type OrganizationPlanOffer = {
  slug: string;
  name: string;
  /** Charged each interval, whole cents. */
  priceMicros: bigint;
  interval: 'month' | 'year';
  /** Credits added to the organization once per confirmed checkout. */
  creditMicros: bigint;
  /** Free days before the first charge, offered once per organization; 0 for none. */
  trialDays: number;
};

const wholeCentsUsd = z.string().transform((value, ctx) => {
  const parsed = parseUsd(value);
  if (!parsed.ok || !isWholeCents(parsed.micros)) {
    ctx.addIssue({ code: 'custom', message: `"${value}" must be a USD amount in whole cents, such as "29.00"` });
    return z.NEVER;
  }
  return parsed.micros;
});

const offer = z.strictObject({
  slug: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a plan slug is lowercase letters, digits and dashes'),
  name: z.string().min(1).max(100),
  priceUsd: wholeCentsUsd,
  interval: z.enum(['month', 'year']),
  creditsUsd: wholeCentsUsd.optional(),
  trialDays: z.number().int().min(0).max(730).optional(),
});

const offers = z
  .array(offer)
  .min(1)
  .refine((list) => new Set(list.map((p) => p.slug)).size === list.length, 'plan slugs must differ');

export const DEFAULT_ORGANIZATION_PLANS: readonly OrganizationPlanOffer[] = [
  { slug: 'starter', name: 'Starter', priceMicros: 29_000_000n, interval: 'month', creditMicros: 25_000_000n, trialDays: 14 },
  { slug: 'growth', name: 'Growth', priceMicros: 290_000_000n, interval: 'year', creditMicros: 300_000_000n, trialDays: 14 },
];

/** Parses HUB_ORGANIZATION_PLANS; throws an Error whose message says what is wrong. */
export function parseOrganizationPlans(json: string | undefined): readonly OrganizationPlanOffer[] {
  if (json === undefined) return DEFAULT_ORGANIZATION_PLANS;
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error('must be a JSON array of plans');
  }
  const result = offers.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new Error(`${issue.path.join('.') || 'value'}: ${issue.message}`);
  }
  return result.data.map((p) => ({
    slug: p.slug,
    name: p.name,
    priceMicros: p.priceUsd,
    interval: p.interval,
    creditMicros: p.creditsUsd ?? 0n,
    trialDays: p.trialDays ?? 0,
  }));
}
