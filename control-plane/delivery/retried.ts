import type { AccountCallResult } from './account-call.js';
import { type DeliverySchedule, hintMs } from './schedule.js';

/**
 * The Limits table's retried deliveries, for an account write and a key mint alike: a network
 * failure, a 429 or any 5xx is tried again, honouring `Retry-After` on the 429 and the 5xx. Each
 * reply module reads every other answer its own way.
 */

/** A call to the seller's account endpoint to make again later, after `afterMs` when the seller said. */
export type Retry = { kind: 'retry'; reason: string; afterMs: number | undefined };

type Reply = Extract<AccountCallResult, { kind: 'reply' }>;
type Unreachable = Extract<AccountCallResult, { kind: 'unreachable' }>;

/** The seller did not answer. */
export function unanswered(result: Unreachable): Retry {
  return { kind: 'retry', reason: `the seller did not answer: ${result.reason}`, afterMs: undefined };
}

/** A 429 or a 5xx, to try again; undefined for any other status. */
export function retriedStatus(reply: Reply, schedule: DeliverySchedule): Retry | undefined {
  if (reply.status !== 429 && reply.status < 500) return undefined;
  return { kind: 'retry', reason: `the seller answered ${reply.status}`, afterMs: hintMs(schedule, reply.retryAfter) };
}
