/**
 * The UTC buckets analytics rollups are kept in. Quarter-hours carry the counts: every time
 * zone's midnight falls on a quarter-hour, so a day counted in any zone is a whole number of
 * them. Hours, days and months carry the per-value tallies behind top-N lists, coarse enough that
 * a year is a few dozen buckets per value.
 */

const QUARTER_MS = 900_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Quarter-hours a day of 24 hours holds. */
export const QUARTERS_PER_DAY = DAY_MS / QUARTER_MS;

export type Grain = 'quarter' | 'hour' | 'day' | 'month';

/** Quarter-hours in one bucket of a grain finer than a month. */
export const QUARTERS_IN = { quarter: 1, hour: 4, day: 96 } as const;

/** The UTC quarter-hour an instant falls in, counted from 1970-01-01. */
export function quarterOf(at: Date | number): number {
  return Math.floor(+at / QUARTER_MS);
}

/** The UTC quarter-hour, hour, day or month an instant falls in, counted from 1970-01. */
export function bucketOf(grain: Grain, at: Date | number): number {
  const ms = +at;
  if (grain === 'quarter') return quarterOf(ms);
  if (grain === 'hour') return Math.floor(ms / HOUR_MS);
  if (grain === 'day') return Math.floor(ms / DAY_MS);
  const date = new Date(ms);
  return (date.getUTCFullYear() - 1970) * 12 + date.getUTCMonth();
}

/** The first instant of a bucket. */
export function bucketStart(grain: Grain, bucket: number): Date {
  if (grain === 'quarter') return quarterStart(bucket);
  if (grain === 'hour') return new Date(bucket * HOUR_MS);
  if (grain === 'day') return new Date(bucket * DAY_MS);
  return new Date(Date.UTC(1970 + Math.floor(bucket / 12), bucket % 12, 1));
}

/** The first instant of the quarter-hour `quarter`. */
export function quarterStart(quarter: number): Date {
  return new Date(quarter * QUARTER_MS);
}

export type BucketRange = { grain: Grain; first: number; end?: number };

/**
 * What tallies cover `[from, …)` (to the present): whole months, then, before the first of them,
 * whole days, then whole hours, and a head shorter than an hour that only raw rows can answer.
 * Each range is `[first, end)` in its grain's buckets; `end` is absent for the open last one.
 */
export function tallyRanges(from: Date): { head: { from: Date; to: Date } | null; ranges: BucketRange[] } {
  const ranges: BucketRange[] = [];
  const hour = Math.ceil(+from / HOUR_MS);
  const day = Math.ceil(+from / DAY_MS);
  const fromDay = new Date(day * DAY_MS);
  const month = bucketOf('month', fromDay) + (fromDay.getUTCDate() === 1 ? 0 : 1);
  const monthStart = +bucketStart('month', month);
  // Hours up to the first whole day, days up to the first whole month, months to the present.
  ranges.push({ grain: 'hour', first: hour, end: (day * DAY_MS) / HOUR_MS });
  ranges.push({ grain: 'day', first: day, end: Math.floor(monthStart / DAY_MS) });
  ranges.push({ grain: 'month', first: month });
  const headEnd = new Date(hour * HOUR_MS);
  return { head: +headEnd > +from ? { from, to: headEnd } : null, ranges: ranges.filter((r) => r.end === undefined || r.end > r.first) };
}
