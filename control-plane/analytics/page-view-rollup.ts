import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { chunks } from '../db/chunks.js';
import type { Db } from '../db/client.js';
import type { PageViewRow } from '../page-views/sink.js';
import { bucketOf, type Grain } from './time-buckets.js';

/**
 * Writes a batch of accepted page views with their rollups, in one transaction: the raw rows, the
 * counts per seller and quarter-hour and hour by viewer class (`PageViewStat`), and the views per path,
 * country and referrer per hour, day and month (`PageViewTally`). Views of a seller deleted since
 * they were accepted are dropped: a batch must never fail for good on them.
 */
export async function writePageViews(db: Db, rows: readonly PageViewRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  return db.$transaction(async (tx) => {
    const sellers = await tx.seller.findMany({ where: { id: { in: [...new Set(rows.map((r) => r.sellerId))] } }, select: { id: true } });
    const live = new Set(sellers.map((s) => s.id));
    const kept = rows.filter((r) => live.has(r.sellerId));
    if (kept.length === 0) return 0;
    for (const chunk of chunks(kept, 500)) await insertViews(tx, chunk);
    for (const chunk of chunks([...stats(kept).values()], 500)) await upsertStats(tx, chunk);
    for (const chunk of chunks([...tallies(kept).values()], 1_000)) await upsertTallies(tx, chunk);
    return kept.length;
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

/** Raw SQL: the ORM's createMany spent most of a batch's time building its statement. */
function insertViews(tx: Prisma.TransactionClient, rows: PageViewRow[]) {
  const values = rows.map(
    (v) =>
      Prisma.sql`(${v.id}, ${v.organizationId}, ${v.sellerId}, ${v.path}, ${v.status}, ${v.durationMs}, ${v.capturedAt}, ${v.journeyId}, ${v.viewerId}, ${v.viewerClass}, ${v.acceptsMarkdown}, ${v.country}, ${v.referrerHost}, ${v.createdAt})`,
  );
  return tx.$executeRaw`INSERT INTO "PageView" ("id", "organizationId", "sellerId", "path", "status", "durationMs", "capturedAt", "journeyId",
    "viewerId", "viewerClass", "acceptsMarkdown", "country", "referrerHost", "createdAt") VALUES ${Prisma.join(values)}`;
}

function upsertStats(tx: Prisma.TransactionClient, rows: Stat[]) {
  const values = rows.map(
    (s) =>
      Prisma.sql`(${s.sellerId}, ${s.grain}, ${s.bucket}, ${s.views}, ${s.human}, ${s.agent}, ${s.crawler}, ${s.unknown}, ${s.markdown})`,
  );
  return tx.$executeRaw`INSERT INTO "PageViewStat" ("sellerId", "grain", "bucket", "views", "human", "agent", "crawler", "unknown", "markdown")
    VALUES ${Prisma.join(values)}
    ON CONFLICT ("sellerId", "grain", "bucket") DO UPDATE SET "views" = "PageViewStat"."views" + excluded."views",
      "human" = "PageViewStat"."human" + excluded."human", "agent" = "PageViewStat"."agent" + excluded."agent",
      "crawler" = "PageViewStat"."crawler" + excluded."crawler", "unknown" = "PageViewStat"."unknown" + excluded."unknown",
      "markdown" = "PageViewStat"."markdown" + excluded."markdown"`;
}

function upsertTallies(tx: Prisma.TransactionClient, rows: Tally[]) {
  const values = rows.map((t) => Prisma.sql`(${t.sellerId}, ${t.dimension}, ${t.grain}, ${t.start}, ${t.value}, ${t.views})`);
  return tx.$executeRaw`INSERT INTO "PageViewTally" ("sellerId", "dimension", "grain", "start", "value", "views")
    VALUES ${Prisma.join(values)}
    ON CONFLICT ("sellerId", "dimension", "grain", "start", "value") DO UPDATE SET "views" = "PageViewTally"."views" + excluded."views"`;
}
