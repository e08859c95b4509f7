import type { AccountCallResult } from './account-call.js';
import { type Retry, retriedStatus, unanswered } from './retried.js';
import { type DeliverySchedule, hintMs } from './schedule.js';

/**
 * What a seller's answer to an account write means (spec: Write replies, Limits): applied;
 * provisioning (the same write again after the hint); retried (network failure, 429, any 5xx, a
 * 2xx whose body does not parse, honouring `Retry-After` on 429 and 5xx); or failed at once (any
 * other status, redirects included, since they are never followed).
 */
export type WriteVerdict = { kind: 'applied' } | { kind: 'provisioning'; afterMs: number } | Retry | { kind: 'failed'; reason: string };

export function writeVerdict(result: AccountCallResult, schedule: DeliverySchedule): WriteVerdict {
  if (result.kind === 'no_secret') return { kind: 'retry', reason: 'the seller has no active signing secret', afterMs: undefined };
  if (result.kind === 'unreachable') return unanswered(result);
  const retry = retriedStatus(result, schedule);
  if (retry) return retry;
  const { status } = result;
  if (status < 200 || status > 299) return { kind: 'failed', reason: `the seller answered ${status}` };
  let reply: { lifecycle?: unknown; retryAfterSeconds?: unknown };
  try {
    reply = JSON.parse(result.text) as typeof reply;
  } catch {
    return { kind: 'retry', reason: `the seller answered ${status} with a body that is not JSON`, afterMs: undefined };
  }
  if (reply?.lifecycle === 'active') return { kind: 'applied' };
  if (reply?.lifecycle === 'provisioning') {
    return { kind: 'provisioning', afterMs: hintMs(schedule, reply.retryAfterSeconds) ?? schedule.firstBackoffMs };
  }
  return { kind: 'retry', reason: `the seller answered ${status} without a lifecycle hub knows`, afterMs: undefined };
}
