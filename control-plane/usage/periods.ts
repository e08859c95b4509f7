/**
 * Which period included units are counted in. Usage rows are keyed by the period's start, so a
 * new period starts from zero without any reset job.
 */

/** Accesses without a period (plans that never renew) count in one period for good. */
export const WHOLE_LIFE = new Date(0);

/** An access counts included units per its own period, as the seller's account writes set it. */
export function accessPeriodStart(access: { periodStart: Date | null }): Date {
  return access.periodStart ?? WHOLE_LIFE;
}

/**
 * The free-mode pool of a buyer follows the pay-as-you-go plan's interval, on the UTC calendar:
 * `month` resets on the 1st, `year` on January 1st, `none` never.
 */
export function freePoolPeriodStart(interval: string, now: Date): Date {
  if (interval === 'month') return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  if (interval === 'year') return new Date(Date.UTC(now.getUTCFullYear(), 0, 1));
  return WHOLE_LIFE;
}
