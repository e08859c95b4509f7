import { setTimeout as sleep } from 'node:timers/promises';
import { CONTROL_PLANE_CALL_TIMEOUT_MS } from '../../shared/contract.js';
import type { AccountCallResult } from './account-call.js';
import { DEFAULT_MINT_RETRY_MS, type MintVerdict, mintVerdict } from './mint-reply.js';
import type { DeliverySchedule } from './schedule.js';

/**
 * How long one `POST /keys/redeem` may spend asking the seller, and how it retries inside that
 * time. Unlike an account write, a mint has an agent waiting on the line, behind the proxy's own
 * wait for the control-plane (`CONTROL_PLANE_CALL_TIMEOUT_MS`, 10 s). So the Limits table's retried
 * failures are tried again only while the agent can still be answered: quick failures (a refused
 * connection, a 503, a garbled 200) get short pauses and up to three attempts; a seller that used
 * its whole 7 s budget, or asks for a longer pause than is left, is not waited for. The agent is
 * then answered at once with a retry hint: the seller's `Retry-After` (capped at 30 minutes), or
 * the spec's first backoff step, 30 s.
 */
export type MintBudget = {
  /** From the first attempt to the answer. */
  totalMs: number;
  maxAttempts: number;
  /** The pause after the first failed attempt, doubling after each further one. */
  firstPauseMs: number;
  /** An attempt is not started with less time than this left: the seller could not answer in it. */
  minAttemptMs: number;
};

export const MINT_BUDGET: MintBudget = Object.freeze({
  // Room for the control-plane's own reads before the mint and the answer's way back.
  totalMs: CONTROL_PLANE_CALL_TIMEOUT_MS - 1_500,
  maxAttempts: 3,
  firstPauseMs: 500,
  minAttemptMs: 2_000,
});

export type MintOutcome =
  | Exclude<MintVerdict, { kind: 'retry' }>
  | { kind: 'gave_up'; reason: string; retryAfterMs: number }
  | { kind: 'no_secret' };

/** Calls `attempt` (given its own time limit) until it answers something other than a retry, or the budget is spent. */
export async function mintWithRetries(
  attempt: (budgetMs: number) => Promise<AccountCallResult>,
  schedule: DeliverySchedule,
  budget: MintBudget = MINT_BUDGET,
): Promise<MintOutcome & { attempts: number }> {
  const deadline = Date.now() + budget.totalMs;
  for (let attempts = 1; ; attempts++) {
    const result = await attempt(Math.min(schedule.budgetMs, deadline - Date.now()));
    if (result.kind === 'no_secret') return { kind: 'no_secret', attempts };
    const verdict = mintVerdict(result, schedule);
    if (verdict.kind !== 'retry') return { ...verdict, attempts };
    const pauseMs = verdict.afterMs ?? budget.firstPauseMs * 2 ** (attempts - 1);
    if (attempts >= budget.maxAttempts || Date.now() + pauseMs + budget.minAttemptMs > deadline) {
      return { kind: 'gave_up', reason: verdict.reason, retryAfterMs: verdict.afterMs ?? DEFAULT_MINT_RETRY_MS, attempts };
    }
    await sleep(pauseMs);
  }
}
