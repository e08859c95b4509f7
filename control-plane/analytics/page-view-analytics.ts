import type { z } from 'zod';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { pageViewAnalytics } from '../../shared/schemas/analytics.js';
import type { Db } from '../db/client.js';
import { QUARTERS_IN, tallyRanges } from './time-buckets.js';
import { type AnalyticsWindow, dayRuns } from './window.js';

type PageViewAnalytics = z.infer<typeof pageViewAnalytics>;
type Counted = { value: string; views: number };

const TOP = 20;
const DIMENSIONS = { topPaths: 'path', countries: 'country', referrers: 'referrer' } as const;
const RAW_COLUMN = { path: '"path"', country: '"country"', referrer: '"referrerHost"' } as const;

/**
 * A seller's page views for a window, from rollups (page-view-rollup.ts): the counts per local
 * day from hour or quarter-hour rows, each top-N list from month, day and hour tallies plus, where the
 * window starts inside an hour (zones offset by :30 or :45), the raw views of that part hour.
 */
export async function pageViewAnalyticsFor(db: Db, sellerId: string, window: AnalyticsWindow): Promise<PageViewAnalytics> {
  const [perDay, topPaths, countries, referrers] = await Promise.all([
    viewsPerDay(db, sellerId, window),
    top(db, sellerId, DIMENSIONS.topPaths, window.start),
    top(db, sellerId, DIMENSIONS.countries, window.start),
    top(db, sellerId, DIMENSIONS.referrers, window.start),
  ]);
  const total = { views: 0, human: 0, agent: 0, crawler: 0, unknown: 0, markdown: 0 };
  for (const day of perDay.values()) for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += day[key];
  return {
    days: window.days,
    timeZone: window.timeZone,
    views: total.views,
    byClass: { human: total.human, agent: total.agent, crawler: total.crawler, unknown: total.unknown },
    acceptsMarkdown: total.markdown,
    perDay: window.dayList.map((day, index) => {
      const counts = perDay.get(index);
      return {
        date: day.date,
        views: counts?.views ?? 0,
        human: counts?.human ?? 0,
        agent: counts?.agent ?? 0,
        crawler: counts?.crawler ?? 0,
        unknown: counts?.unknown ?? 0,
      };
    }),
    topPaths,
    countries,
    referrers,
  };
}

type DayCounts = { views: number; human: number; agent: number; crawler: number; unknown: number; markdown: number };

/**
 * Rollup rows summed per local day in one statement: within a run of equal days the day's number
 * is the bucket's distance from the run's start divided by the day's length. Hour rows where
 * every day starts on the hour; quarter-hour rows for zones offset by :30 or :45.
 */
async function viewsPerDay(db: Db, sellerId: string, window: AnalyticsWindow): Promise<Map<number, DayCounts>> {
  const onTheHour = window.dayList.every((d) => d.firstQuarter % QUARTERS_IN.hour === 0 && d.endQuarter % QUARTERS_IN.hour === 0);
  const grain = onTheHour ? 'hour' : 'quarter';
  const size = QUARTERS_IN[grain];
  const runs = dayRuns(window).map((r) => ({
    firstDay: r.firstDay,
    first: r.firstQuarter / size,
    end: r.endQuarter / size,
    perDay: r.quartersPerDay / size,
  }));
  const day = Prisma.join(
    // CAST: SQLite may bind a number as a real, which would make the division exact.
    runs.map(
      (r) =>
        Prisma.sql`WHEN "bucket" < ${r.end} THEN CAST(${r.firstDay} AS INTEGER) + ("bucket" - CAST(${r.first} AS INTEGER)) / CAST(${r.perDay} AS INTEGER)`,
    ),
    ' ',
  );
  const rows = await db.$queryRaw<Record<keyof DayCounts | 'day', unknown>[]>`
    SELECT CASE ${day} END AS day, SUM("views") AS views, SUM("human") AS human, SUM("agent") AS agent,
      SUM("crawler") AS crawler, SUM("unknown") AS unknown, SUM("markdown") AS markdown
    FROM "PageViewStat" WHERE "sellerId" = ${sellerId} AND "grain" = ${grain} AND "bucket" >= ${runs[0]!.first} AND "bucket" < ${runs.at(-1)!.end}
    GROUP BY 1`;
  return new Map(
    rows.map((r) => [
      Number(r.day),
      {
        views: Number(r.views),
        human: Number(r.human),
        agent: Number(r.agent),
        crawler: Number(r.crawler),
        unknown: Number(r.unknown),
        markdown: Number(r.markdown),
      },
    ]),
  );
}

/** The most viewed values of a dimension since `from`, in one statement over the tallies (and raw views of a part hour). */
async function top(db: Db, sellerId: string, dimension: 'path' | 'country' | 'referrer', from: Date): Promise<Counted[]> {
  const { head, ranges } = tallyRanges(from);
  const parts = ranges.map(
    (r) => Prisma.sql`SELECT "value", "views" FROM "PageViewTally"
      WHERE "sellerId" = ${sellerId} AND "dimension" = ${dimension} AND "grain" = ${r.grain} AND "start" >= ${r.first}
      ${r.end === undefined ? Prisma.empty : Prisma.sql`AND "start" < ${r.end}`}`,
  );
  if (head) {
    const column = Prisma.raw(RAW_COLUMN[dimension]);
    const value = dimension === 'country' ? column : Prisma.sql`SUBSTR(${column}, 1, 500)`;
    parts.push(Prisma.sql`SELECT ${value} AS "value", 1 AS "views" FROM "PageView"
      WHERE "sellerId" = ${sellerId} AND "createdAt" >= ${head.from} AND "createdAt" < ${head.to} AND ${column} IS NOT NULL`);
  }
  const rows = await db.$queryRaw<{ value: string; views: unknown }[]>`
    SELECT "value", SUM("views") AS views FROM (${Prisma.join(parts, ' UNION ALL ')}) AS counted
    GROUP BY "value" ORDER BY 2 DESC, "value" LIMIT ${TOP}`;
  return rows.map((r) => ({ value: r.value, views: Number(r.views) }));
}
