/**
 * Periods of bought plans, on the UTC calendar. A month from the 31st ends on the last day of a
 * shorter month (Jan 31 → Feb 28), so a period is never longer than the calendar says.
 */
export type Interval = 'none' | 'month' | 'year';

/** When a period of `interval` that starts at `start` ends; null for plans that never expire. */
export function periodEnd(start: Date, interval: string): Date | null {
  if (interval === 'month') return addMonths(start, 1);
  if (interval === 'year') return addMonths(start, 12);
  return null;
}

function addMonths(date: Date, months: number): Date {
  const target = new Date(date.getTime());
  const day = target.getUTCDate();
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, lastDay));
  return target;
}

/**
 * The period after a renewal at `now`: it starts now (included units count afresh) and ends one
 * interval after the later of now and the current end, so time already paid for is never lost.
 */
export function renewedPeriod(current: { end: Date | null }, interval: string, now: Date): { start: Date; end: Date | null } {
  const from = current.end && current.end > now ? current.end : now;
  return { start: now, end: periodEnd(from, interval) };
}
