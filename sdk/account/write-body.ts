import { z } from 'zod';
import { isId } from '../../shared/ids.js';
import type { AccountPlan, AccountStatus } from './account.js';
import { sixDecimalUsd, timestamp } from './money-field.js';
import { describe, type ParseResult } from './parse-result.js';

/**
 * The account write body (spec: Account (stateful seller) write body), in both variants, read into
 * one shape. The original names the customer `agent` and the credit totals `creditGrantedUsd` /
 * `creditReversedUsd` (which older writes omit); the later variant names them `agentId`,
 * `lifetimeCreditGrantedUsd` / `lifetimeCreditReversedUsd`, adds `buyerId` and `buyerEmail`, and
 * always sends every field, null when unset. hub adds `buyerEmail` to the original variant when the
 * plan's email policy lets the seller have it. Unknown extra fields are ignored.
 */
export type AccountWrite = {
  variant: 'original' | 'later';
  accessId: string;
  agentId: string;
  buyerId: string | null;
  buyerEmail: string | null;
  idempotencyKey: string;
  stateVersion: number;
  plan: AccountPlan;
  period: { start: string; end: string | null };
  /** null: the plan has no credit component. */
  creditGrantedMicros: bigint | null;
  /** A missing or null total reads as zero. */
  creditReversedMicros: bigint;
  status: AccountStatus;
};

const accessId = z.string().refine((v) => isId('access', v), 'must be an account id (hubacc_…)');
const agentId = z.string().refine((v) => isId('agent', v), 'must be an agent id (agt_…)');
const plan = z.object({
  slug: z.string().min(1),
  name: z.string(),
  billingMode: z.enum(['subscription', 'subscription_usage', 'credit']),
  interval: z.enum(['none', 'month', 'year']),
  basePriceUsd: sixDecimalUsd,
});
const period = z.object({ start: timestamp, end: timestamp.nullable() });
const status = z.enum(['active', 'suspended']);
const common = {
  accessId,
  idempotencyKey: z.string(),
  stateVersion: z.int().min(0),
  plan,
};

const original = z.object({
  ...common,
  agent: agentId,
  // Not declared by the original variant: hub adds it when the plan lets the seller have the email.
  buyerEmail: z.string().min(3).nullish(),
  state: z.object({
    period,
    creditGrantedUsd: sixDecimalUsd.nullable(),
    creditReversedUsd: sixDecimalUsd.nullish(),
    status,
  }),
});

const later = z.object({
  ...common,
  agentId,
  buyerId: z
    .string()
    .refine((v) => isId('buyer', v), 'must be a buyer id (byr_…)')
    .nullable(),
  buyerEmail: z.string().min(3).nullable(),
  state: z.object({
    period,
    lifetimeCreditGrantedUsd: sixDecimalUsd.nullable(),
    lifetimeCreditReversedUsd: sixDecimalUsd.nullable(),
    status,
  }),
});

/** Reads a JSON-decoded body; the message of a failure is what the 400 says. */
export function parseAccountWrite(body: unknown): ParseResult<AccountWrite> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { ok: false, message: 'the account write body must be a JSON object' };
  const hasOriginal = Object.hasOwn(body, 'agent');
  const hasLater = Object.hasOwn(body, 'agentId');
  if (hasOriginal === hasLater)
    return { ok: false, message: 'the account write body must name its agent in exactly one of agent or agentId' };

  if (hasOriginal) {
    const parsed = original.safeParse(body);
    if (!parsed.success) return { ok: false, message: describe(parsed.error) };
    const { state, agent, buyerEmail, ...rest } = parsed.data;
    return {
      ok: true,
      value: {
        variant: 'original',
        ...rest,
        plan: planOf(rest.plan),
        agentId: agent,
        buyerId: null,
        buyerEmail: buyerEmail ?? null,
        period: state.period,
        creditGrantedMicros: state.creditGrantedUsd,
        creditReversedMicros: state.creditReversedUsd ?? 0n,
        status: state.status,
      },
    };
  }
  const parsed = later.safeParse(body);
  if (!parsed.success) return { ok: false, message: describe(parsed.error) };
  const { state, ...rest } = parsed.data;
  return {
    ok: true,
    value: {
      variant: 'later',
      ...rest,
      plan: planOf(rest.plan),
      period: state.period,
      creditGrantedMicros: state.lifetimeCreditGrantedUsd,
      creditReversedMicros: state.lifetimeCreditReversedUsd ?? 0n,
      status: state.status,
    },
  };
}

function planOf(p: z.output<typeof plan>): AccountPlan {
  return { slug: p.slug, name: p.name, billingMode: p.billingMode, interval: p.interval, basePriceMicros: p.basePriceUsd };
}
