import { newId } from '../../shared/ids.js';
import { formatUsd } from '../../shared/money.js';

/** Account write bodies as hub sends them, in both variants (spec: Account write body). */
export type WriteSpec = {
  accessId: string;
  agentId: string;
  stateVersion: number;
  granted?: bigint | null;
  /** undefined: an older write that omits the reversal total. */
  reversed?: bigint | null;
  status?: 'active' | 'suspended';
  periodStart?: string;
  periodEnd?: string | null;
  billingMode?: 'subscription' | 'subscription_usage' | 'credit';
};

const PLAN = { slug: 'pro', name: 'Pro', interval: 'month', basePriceUsd: '10.000000' } as const;
const START = '2026-01-01T00:00:00.000Z';
const END = '2099-02-01T00:00:00.000Z';

export function originalWrite(w: WriteSpec): Record<string, any> {
  const state: Record<string, unknown> = {
    period: { start: w.periodStart ?? START, end: w.periodEnd === undefined ? END : w.periodEnd },
    creditGrantedUsd: w.granted === undefined ? '10.000000' : w.granted === null ? null : formatUsd(w.granted),
    status: w.status ?? 'active',
  };
  if (w.reversed !== undefined) state.creditReversedUsd = w.reversed === null ? null : formatUsd(w.reversed);
  return {
    accessId: w.accessId,
    agent: w.agentId,
    idempotencyKey: `${w.accessId}:${w.stateVersion}`,
    stateVersion: w.stateVersion,
    plan: { ...PLAN, billingMode: w.billingMode ?? 'credit' },
    state,
  };
}

export function laterWrite(w: WriteSpec & { buyerId: string | null; buyerEmail: string | null }): Record<string, any> {
  return {
    accessId: w.accessId,
    agentId: w.agentId,
    buyerId: w.buyerId,
    buyerEmail: w.buyerEmail,
    idempotencyKey: `${w.accessId}:${w.stateVersion}`,
    stateVersion: w.stateVersion,
    plan: { ...PLAN, billingMode: w.billingMode ?? 'credit' },
    state: {
      period: { start: w.periodStart ?? START, end: w.periodEnd === undefined ? END : w.periodEnd },
      lifetimeCreditGrantedUsd: w.granted === undefined ? '10.000000' : w.granted === null ? null : formatUsd(w.granted),
      lifetimeCreditReversedUsd: w.reversed === undefined || w.reversed === null ? null : formatUsd(w.reversed),
      status: w.status ?? 'active',
    },
  };
}

export const ids = () => ({ accessId: newId('access'), agentId: newId('agent') });
