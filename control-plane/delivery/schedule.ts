/**
 * When account writes and mints are tried again (spec: Limits): backoff from 30 s, doubling with
 * jitter up to 30 minutes; a seller's hint (`Retry-After`, `retryAfterSeconds`) capped at 30
 * minutes; give up after 20 attempts or 24 hours, whichever comes first; 7 s per attempt. Tests
 * pass a faster schedule; `DELIVERY_SCHEDULE` is the spec's.
 */
export type DeliverySchedule = {
  firstBackoffMs: number;
  maxBackoffMs: number;
  maxHintMs: number;
  maxAttempts: number;
  giveUpAfterMs: number;
  /** The seller's response budget per attempt. */
  budgetMs: number;
  /** How long a worker holds a row it is delivering; a worker that died lets go when it lapses. */
  leaseMs: number;
};

export const DELIVERY_SCHEDULE: DeliverySchedule = Object.freeze({
  firstBackoffMs: 30_000,
  maxBackoffMs: 30 * 60_000,
  maxHintMs: 30 * 60_000,
  maxAttempts: 20,
  giveUpAfterMs: 24 * 3_600_000,
  budgetMs: 7_000,
  leaseMs: 60_000,
});

/**
 * The pause after `attempts` failed attempts: the doubling step, then "equal jitter" (half fixed,
 * half random), so retries of many writes after one outage spread out but never come early.
 */
export function backoffMs(schedule: DeliverySchedule, attempts: number, random = Math.random): number {
  const step = Math.min(schedule.maxBackoffMs, schedule.firstBackoffMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}

/**
 * A seller's hint, capped: seconds as a number (`retryAfterSeconds`) or a `Retry-After` value
 * (seconds or an HTTP date). Undefined when there is none or it reads as neither.
 */
export function hintMs(schedule: DeliverySchedule, hint: unknown, now = Date.now()): number | undefined {
  let ms: number | undefined;
  if (typeof hint === 'number' && Number.isFinite(hint) && hint >= 0) ms = Math.ceil(hint) * 1000;
  else if (typeof hint === 'string' && /^\d{1,10}$/.test(hint.trim())) ms = Number(hint.trim()) * 1000;
  else if (typeof hint === 'string' && !Number.isNaN(Date.parse(hint))) ms = Math.max(0, Date.parse(hint) - now);
  return ms === undefined ? undefined : Math.min(schedule.maxHintMs, ms);
}

/** Whether a delivery first tried at `firstTriedAt` has used up its attempts or its time. */
export function exhausted(schedule: DeliverySchedule, attempts: number, firstTriedAt: Date, now: Date): boolean {
  return attempts >= schedule.maxAttempts || now.getTime() - firstTriedAt.getTime() >= schedule.giveUpAfterMs;
}
