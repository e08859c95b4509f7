import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { Db, Provider } from '../db/client.js';
import { columnList, type JsonColumn, jsonRows, OF_EXISTING_SELLER, type Sql, sqlOf } from '../db/sql.js';
import type { PageViewRow } from '../page-views/sink.js';
import { bucketOf, type Grain } from './time-buckets.js';

/**
 * Writes a batch of accepted page views with their rollups, in one transaction on the SQL lane
 * (db/sql.ts): the raw rows, the counts per seller and quarter-hour and hour by viewer class
 * (`PageViewStat`), and the views per path, country and referrer per hour, day and month
 * (`PageViewTally`); three statements whatever the batch's size, its rows bound as one parameter
 * each. Views of a seller deleted since they were accepted are dropped: a batch must never fail
 * for good on them.
 */
export async function writePageViews(db: Db, rows: readonly PageViewRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const lane = sqlOf(db);
  return lane.transaction(async (tx) => {
    const kept = await insertViews(tx, lane.provider, rows);
    if (kept.size === 0) return 0;
    const stored = rows.filter((r) => kept.has(r.id));
    await upsertStats(tx, lane.provider, [...stats(stored).values()]);
    await upsertTallies(tx, lane.provider, [...tallies(stored).values()]);
    return stored.length;
  });
}

/** A path is tallied by its first 500 characters: an index entry must stay within PostgreSQL's limit. */
const MAX_TALLIED_VALUE = 500;
const GRAINS: Grain[] = ['hour', 'day', 'month'];
/** Counts by class per quarter-hour and per hour: a day in a zone on the hour sums 24 hours. */
const STAT_GRAINS = ['quarter', 'hour'] as const;
const CLASSES = ['human', 'agent', 'crawler', 'unknown'] as const;

type Stat = { sellerId: string; grain: string; bucket: number; views: number; markdown: number } & Record<(typeof CLASSES)[number], number>;
type Tally = { sellerId: string; dimension: string; grain: Grain; start: number; value: string; views: number };

function stats(rows: readonly PageViewRow[]): Map<string, Stat> {
  const out = new Map<string, Stat>();
  for (const row of rows) {
    const viewer = CLASSES.find((c) => c === row.viewerClass) ?? 'unknown';
    for (const grain of STAT_GRAINS) {
      const bucket = bucketOf(grain, row.createdAt);
      const key = `${row.sellerId} ${grain} ${bucket}`;
      let stat = out.get(key);
      if (!stat) {
        stat = { sellerId: row.sellerId, grain, bucket, views: 0, markdown: 0, human: 0, agent: 0, crawler: 0, unknown: 0 };
        out.set(key, stat);
      }
      stat.views++;
      if (row.acceptsMarkdown) stat.markdown++;
      stat[viewer]++;
    }
  }
  return out;
}

function tallies(rows: readonly PageViewRow[]): Map<string, Tally> {
  const out = new Map<string, Tally>();
  for (const row of rows) {
    const values: [string, string | null][] = [
      ['path', row.path.slice(0, MAX_TALLIED_VALUE)],
      ['country', row.country],
      ['referrer', row.referrerHost?.slice(0, MAX_TALLIED_VALUE) ?? null],
    ];
    for (const [dimension, value] of values) {
      if (value === null) continue;
      for (const grain of GRAINS) {
        const start = bucketOf(grain, row.createdAt);
        const key = `${row.sellerId}\u0000${dimension}\u0000${grain}\u0000${start}\u0000${value}`;
        const tally = out.get(key);
        if (tally) tally.views++;
        else out.set(key, { sellerId: row.sellerId, dimension, grain, start, value, views: 1 });
      }
    }
  }
  return out;
}

const VIEW_COLUMNS: JsonColumn[] = [
  ['id', 'text'],
  ['organizationId', 'text'],
  ['sellerId', 'text'],
  ['path', 'text'],
  ['status', 'integer'],
  ['durationMs', 'integer'],
  ['capturedAt', 'timestamp(3)'],
  ['journeyId', 'text'],
  ['viewerId', 'text'],
  ['viewerClass', 'text'],
  ['acceptsMarkdown', 'boolean'],
  ['country', 'text'],
  ['referrerHost', 'text'],
  ['createdAt', 'timestamp(3)'],
];
const STAT_COLUMNS: JsonColumn[] = [
  ['sellerId', 'text'],
  ['grain', 'text'],
  ['bucket', 'integer'],
  ...(['views', ...CLASSES, 'markdown'] as const).map((name): JsonColumn => [name, 'integer']),
];
const TALLY_COLUMNS: JsonColumn[] = [
  ['sellerId', 'text'],
  ['dimension', 'text'],
  ['grain', 'text'],
  ['start', 'integer'],
  ['value', 'text'],
  ['views', 'integer'],
];

/** The ids stored: a view of a seller deleted meanwhile is not. */
async function insertViews(tx: Sql, provider: Provider, rows: readonly PageViewRow[]): Promise<Set<string>> {
  const values = rows.map((v) => VIEW_COLUMNS.map(([name]) => v[name as keyof PageViewRow]));
  const inserted = await tx.all<{ id: string }>(Prisma.sql`
    INSERT INTO "PageView" (${columnList(VIEW_COLUMNS)})
    SELECT ${columnList(VIEW_COLUMNS)} FROM ${jsonRows(provider, VIEW_COLUMNS, values)} AS batch ${OF_EXISTING_SELLER}
    RETURNING "id"`);
  return new Set(inserted.map((r) => r.id));
}

function upsertStats(tx: Sql, provider: Provider, stats: readonly Stat[]) {
  const values = stats.map((s) => STAT_COLUMNS.map(([name]) => s[name as keyof Stat]));
  const added = (name: string) => `"${name}" = "PageViewStat"."${name}" + excluded."${name}"`;
  return tx.run(Prisma.sql`
    INSERT INTO "PageViewStat" (${columnList(STAT_COLUMNS)})
    SELECT ${columnList(STAT_COLUMNS)} FROM ${jsonRows(provider, STAT_COLUMNS, values)} AS batch ${OF_EXISTING_SELLER}
    ON CONFLICT ("sellerId", "grain", "bucket") DO UPDATE SET ${Prisma.raw(['views', ...CLASSES, 'markdown'].map(added).join(', '))}`);
}

function upsertTallies(tx: Sql, provider: Provider, tallies: readonly Tally[]) {
  const values = tallies.map((t) => TALLY_COLUMNS.map(([name]) => t[name as keyof Tally]));
  return tx.run(Prisma.sql`
    INSERT INTO "PageViewTally" (${columnList(TALLY_COLUMNS)})
    SELECT ${columnList(TALLY_COLUMNS)} FROM ${jsonRows(provider, TALLY_COLUMNS, values)} AS batch ${OF_EXISTING_SELLER}
    ON CONFLICT ("sellerId", "dimension", "grain", "start", "value") DO UPDATE SET "views" = "PageViewTally"."views" + excluded."views"`);
}
