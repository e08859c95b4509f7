import { z } from 'zod';
import { ExpiringCache } from '../../shared/expiring-cache.js';
import { QUARTERS_PER_DAY, quarterOf, quarterStart } from './time-buckets.js';

/**
 * The period an analytics answer covers: the last `days` days as counted in `timeZone`, today
 * included, from that zone's midnight `days - 1` days ago up to now.
 */
export type AnalyticsWindow = {
  days: number;
  timeZone: string;
  /** The zone's midnight `days - 1` days ago. */
  start: Date;
  /** Each day's local date (YYYY-MM-DD) and its span in UTC quarter-hours, oldest first. */
  dayList: { date: string; firstQuarter: number; endQuarter: number }[];
};

const MAX_ANALYTICS_DAYS = 365;

/** The two query parameters of the analytics routes (spec: an integer 1–365 and a non-empty string). */
export const analyticsQuery = z.object({
  days: z.coerce
    .number({ error: 'days must be a whole number from 1 to 365' })
    .int('days must be a whole number from 1 to 365')
    .min(1, 'days must be a whole number from 1 to 365')
    .max(MAX_ANALYTICS_DAYS, 'days must be a whole number from 1 to 365')
    .default(30)
    .describe('How many days to cover, today included: 1 to 365. Default 30.'),
  timeZone: z
    .string()
    .min(1, 'timeZone must not be empty')
    .max(64, 'timeZone must be an IANA time zone name such as UTC or Europe/Berlin')
    .refine(isTimeZone, 'timeZone must be an IANA time zone name such as UTC or Europe/Berlin')
    .default('UTC')
    .describe('The IANA time zone days are counted in, such as `UTC` or `America/New_York`. Default UTC.'),
});

/**
 * Windows already worked out, by zone, length and the zone's date today: finding a year of local
 * midnights reads the zone's clock some 1,500 times (several milliseconds), and the answer only
 * changes when that date does.
 */
const windows = new ExpiringCache<string, AnalyticsWindow>({ ttlMs: 3_600_000, maxEntries: 1_000 });

export function analyticsWindow(days: number, timeZone: string, now = new Date()): AnalyticsWindow {
  const today = localDate(now, timeZone);
  const key = `${timeZone} ${days} ${isoDate(today)}`;
  let window = windows.get(key);
  if (!window) {
    window = windowOf(days, timeZone, today);
    windows.set(key, window);
  }
  return window;
}

function windowOf(days: number, timeZone: string, today: YMD): AnalyticsWindow {
  const dayList: AnalyticsWindow['dayList'] = [];
  let next = quarterOf(localMidnight(addDays(today, 1), timeZone));
  for (let back = 0; back < days; back++) {
    const date = addDays(today, -back);
    const first = quarterOf(localMidnight(date, timeZone));
    dayList.unshift({ date: isoDate(date), firstQuarter: first, endQuarter: next });
    next = first;
  }
  return { days, timeZone, start: quarterStart(dayList[0]!.firstQuarter), dayList };
}

/**
 * Runs of days of equal length (a zone changing its clock makes a day of 23 or 25 hours), so a
 * query can number the days of each run by division.
 */
export function dayRuns(window: AnalyticsWindow): { firstDay: number; firstQuarter: number; endQuarter: number; quartersPerDay: number }[] {
  const runs: ReturnType<typeof dayRuns> = [];
  window.dayList.forEach((day, index) => {
    const length = day.endQuarter - day.firstQuarter;
    const run = runs.at(-1);
    if (run && run.quartersPerDay === length && length === QUARTERS_PER_DAY && run.endQuarter === day.firstQuarter)
      run.endQuarter = day.endQuarter;
    else runs.push({ firstDay: index, firstQuarter: day.firstQuarter, endQuarter: day.endQuarter, quartersPerDay: length });
  });
  return runs;
}

type YMD = { year: number; month: number; day: number };

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formatters.size < 1_000) formatters.set(timeZone, f);
  }
  return f;
}

function isTimeZone(name: string): boolean {
  try {
    formatter(name);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock of `timeZone` at an instant, read as if it were UTC. */
function wallClock(at: Date, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(at)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
}

function localDate(at: Date, timeZone: string): YMD {
  const wall = new Date(wallClock(at, timeZone));
  return { year: wall.getUTCFullYear(), month: wall.getUTCMonth() + 1, day: wall.getUTCDate() };
}

/**
 * The first instant of a local date: midnight less the zone's offset, where the offset is the one
 * in force either just before or at midnight (a clock change can fall between). Where a clock
 * change skips midnight itself, the day starts at the first instant that exists.
 */
function localMidnight(date: YMD, timeZone: string): Date {
  const asUtc = Date.UTC(date.year, date.month - 1, date.day);
  const before = asUtc - (wallClock(new Date(asUtc), timeZone) - asUtc);
  const after = asUtc - (wallClock(new Date(before), timeZone) - before);
  const candidates = [Math.min(before, after), Math.max(before, after)];
  const onDate = candidates.find((instant) => sameDate(localDate(new Date(instant), timeZone), date));
  return new Date(onDate ?? candidates[1]!);
}

function sameDate(a: YMD, b: YMD): boolean {
  return a.year === b.year && a.month === b.month && a.day === b.day;
}

function addDays(date: YMD, days: number): YMD {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function isoDate(date: YMD): string {
  return `${String(date.year).padStart(4, '0')}-${String(date.month).padStart(2, '0')}-${String(date.day).padStart(2, '0')}`;
}
