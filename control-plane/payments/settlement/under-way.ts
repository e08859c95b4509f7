import { within } from '../../../runtime/within.js';
import { SETTLE_ANSWER_WITHIN_MS } from '../../../shared/contract.js';
import type { PaymentRail } from '../rail.js';

/**
 * What this process has under way, the only settlement state held outside the database:
 *
 * * the attempts each rail is submitting now, so the pending loop does not start a second
 *   submission beside one still running (a second would be safe, only wasted);
 * * the settlements that went on after their answer went out, so a control-plane that stops
 *   waits for them to be recorded.
 *
 * Both are lost in a crash without harm: the attempt is `settling` in the database, and the pending
 * loop finds the transfer already on chain rather than sending another.
 */

const submitting = new WeakMap<PaymentRail, Set<string>>();
const withoutRail = new Set<string>();

/** The attempts `rail` is submitting now. */
export function submittingOn(rail: PaymentRail | undefined): Set<string> {
  if (!rail) return withoutRail;
  let ids = submitting.get(rail);
  if (!ids) {
    ids = new Set();
    submitting.set(rail, ids);
  }
  return ids;
}

/** Runs `submit` with attempt `id` marked as being submitted on `rail` while it runs. */
export async function whileSubmitting<T>(rail: PaymentRail | undefined, id: string, submit: () => Promise<T>): Promise<T> {
  const ids = submittingOn(rail);
  ids.add(id);
  try {
    return await submit();
  } finally {
    ids.delete(id);
  }
}

const following = new Set<Promise<unknown>>();

/**
 * A settlement the answer did not wait for. A failure is recorded as for any settlement (the
 * agent has its answer by then); one that throws is left `settling` for the pending loop.
 */
export function follow(settlement: Promise<unknown>): void {
  const followed = settlement.catch(() => {});
  following.add(followed);
  void followed.finally(() => following.delete(followed));
}

/**
 * `work` (a settlement or a hold, recorded when it ends), waited for at most
 * `SETTLE_ANSWER_WITHIN_MS`: a chain (or facilitator) slower than the proxy waits must not cost the
 * agent its answer. Undefined past that; the work goes on behind the answer (`follow`).
 */
export async function answeredWithin<T>(work: Promise<T>): Promise<T | undefined> {
  const result = await within(work, SETTLE_ANSWER_WITHIN_MS);
  if (!result) follow(work);
  return result;
}

/**
 * Settles once every settlement that went on after its answer has been recorded (or given up to
 * the pending loop), or after `maxWaitMs`: one stuck on an unanswering node is left to the pending loop.
 */
export async function settlementsAfterResponse(maxWaitMs = 10_000): Promise<void> {
  await within(
    (async () => {
      while (following.size) await Promise.all(following);
    })(),
    maxWaitMs,
  );
}
