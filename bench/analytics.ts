// npm run bench:analytics — how fast seller analytics answer over a year of traffic, and how
// many page views a second hub takes in.
//
// For each database (SQLite; PostgreSQL when one answers at HUB_BENCH_PG_URL, default
// postgresql://postgres@127.0.0.1:5432/postgres, on a scratch database dropped afterwards;
// BENCH_POSTGRES=off skips it):
// one seller's year is loaded through the writers the product uses (bench/lib/analytics-seed.ts):
// BENCH_REQUESTS request records (default 1,000,000), BENCH_PAYMENTS payments (100,000) and
// BENCH_VIEWS page views (1,000,000) over 365 days. Then `hub start control-plane` runs on it and
// both analytics routes are asked for 1, 30 and 365 days in UTC and in Asia/Kolkata (a zone whose
// midnight falls on the half hour), 20 times each after a warm-up: the median and the slowest
// answer are printed, over HTTP on loopback. Last, wrk posts page views for BENCH_SECONDS
// (default 10) with 50 connections: accepted per second, and the rows written by the time the
// buffer has drained. Targets: every answer under 50 ms; ingestion ≥ 5,000 views/s on SQLite.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../control-plane/db/client.js';
import { parseDatabaseUrl } from '../shared/config.js';
import { type AnalyticsLoad, type AnalyticsSeed, seedAnalytics } from './lib/analytics-seed.js';
import { freePort, Processes, waitUntilUp } from './lib/processes.js';
import { benchPostgres } from './lib/scratch-postgres.js';
import { jsonPostScript } from './lib/usage-scripts.js';
import { requireWrk, wrk } from './lib/wrk.js';

const here = dirname(fileURLToPath(import.meta.url));
const LOAD: AnalyticsLoad = {
  requests: Number(process.env.BENCH_REQUESTS ?? 1_000_000),
  payments: Number(process.env.BENCH_PAYMENTS ?? 100_000),
  views: Number(process.env.BENCH_VIEWS ?? 1_000_000),
  days: 365,
};
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ASKS = 20;
const WINDOWS = [1, 30, 365];
const ZONES = ['UTC', 'Asia/Kolkata'];
const ROUTES = { seller: '', 'page views': '/page-views' } as const;
const log = (line: string) => console.log(line);

type Timing = { database: string; route: string; days: number; timeZone: string; p50: number; max: number };
/** Views accepted per second under load; all of them written (`lost` counts any that were not) within `drainSeconds` after the load. */
type Ingestion = { database: string; acceptedPerSecond: number; written: number; lost: number; drainSeconds: number; errors: number };
type Loaded = { database: string; seconds: AnalyticsSeed['seconds'] };

async function main() {
  await requireWrk(log);
  const timings: Timing[] = [];
  const ingestion: Ingestion[] = [];
  const loaded: Loaded[] = [];
  const work = mkdtempSync(join(tmpdir(), 'hub-bench-analytics-'));
  try {
    await measure('SQLite', `file:${join(work, 'hub.db')}`, work, { timings, ingestion, loaded });
    const scratch = await benchPostgres(log);
    if (scratch) {
      try {
        await measure('PostgreSQL', scratch.url, work, { timings, ingestion, loaded });
      } finally {
        await scratch.drop();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  log(
    `\nAnalytics over ${LOAD.requests.toLocaleString('en-US')} request records, ${LOAD.payments.toLocaleString('en-US')} payments and ${LOAD.views.toLocaleString('en-US')} page views in ${LOAD.days} days, ${ASKS} asks each, HTTP on loopback, ${new Date().toISOString().slice(0, 10)}\n`,
  );
  log('| database | route | days | time zone | p50 ms | max ms |');
  log('|---|---|---:|---|---:|---:|');
  for (const r of timings) log(`| ${r.database} | ${r.route} | ${r.days} | ${r.timeZone} | ${r.p50.toFixed(1)} | ${r.max.toFixed(1)} |`);
  log(
    '\n| database | page views accepted/s | written | lost | all written after the load | errors | load: requests / payments / views s |',
  );
  log('|---|---:|---:|---:|---:|---:|---|');
  for (const r of ingestion) {
    const s = loaded.find((l) => l.database === r.database)!.seconds;
    log(
      `| ${r.database} | ${r.acceptedPerSecond.toFixed(0)} | ${r.written} | ${r.lost} | ${r.drainSeconds.toFixed(1)} s | ${r.errors} | ${s.requests.toFixed(0)} / ${s.payments.toFixed(0)} / ${s.views.toFixed(0)} |`,
    );
  }
  const slowest = Math.max(...timings.map((r) => r.max));
  const sqlite = ingestion.find((r) => r.database === 'SQLite');
  log(`\nslowest answer ${slowest.toFixed(1)} ms (target < 50 ms) ${slowest < 50 ? 'met' : 'MISSED'}`);
  if (sqlite) {
    const met = sqlite.acceptedPerSecond >= 5_000 && sqlite.lost === 0;
    log(
      `SQLite ingestion ${sqlite.acceptedPerSecond.toFixed(0)} views/s accepted, ${sqlite.lost} lost (target ≥ 5,000/s, none lost) ${met ? 'met' : 'MISSED'}`,
    );
  }
}

async function measure(
  database: string,
  url: string,
  work: string,
  out: { timings: Timing[]; ingestion: Ingestion[]; loaded: Loaded[] },
): Promise<void> {
  log(`${database}: loading`);
  const seed = await seedAnalytics(url, LOAD, log);
  out.loaded.push({ database, seconds: seed.seconds });
  const processes = new Processes();
  try {
    const port = await freePort();
    processes.start(process.execPath, [join(here, '..', 'bin', 'hub.js'), 'start', 'control-plane'], {
      DATABASE_URL: url,
      HUB_DATA_DIR: work,
      HUB_MASTER_KEY: randomBytes(32).toString('hex'),
      HUB_CONTROL_PLANE_PORT: String(port),
      HUB_LOG_LEVEL: 'warn',
    });
    const base = `http://127.0.0.1:${port}`;
    await waitUntilUp(`${base}/healthz`);

    for (const [route, suffix] of Object.entries(ROUTES)) {
      for (const timeZone of ZONES) {
        for (const days of WINDOWS) {
          const target = `${base}/v1/analytics/sellers/${seed.sellerId}${suffix}?days=${days}&timeZone=${timeZone}`;
          const times: number[] = [];
          for (let i = 0; i < ASKS + 2; i++) {
            const began = performance.now();
            const res = await fetch(target, { headers: { authorization: `Bearer ${seed.apiKey}` } });
            await res.arrayBuffer();
            if (res.status !== 200) throw new Error(`${target} answered ${res.status}`);
            if (i >= 2) times.push(performance.now() - began);
          }
          times.sort((a, b) => a - b);
          out.timings.push({ database, route, days, timeZone, p50: times[Math.floor(times.length / 2)]!, max: times.at(-1)! });
        }
      }
    }

    const before = await countViews(url);
    const script = join(work, `page-views-${database}.lua`);
    writeFileSync(script, pageViewScript(seed));
    const load = await wrk(`${base}/v1/page-views`, { connections: 50, seconds: SECONDS, script });
    // Accepted views are written in the background: wait until they all are, or the count stops moving.
    const accepted = load.requests - load.errors;
    const loadEnded = performance.now();
    let written = 0;
    let drainSeconds = 0;
    for (let stable = 0, last = -1; stable < 6 && written < accepted; ) {
      await new Promise((r) => setTimeout(r, 250));
      written = (await countViews(url)) - before;
      drainSeconds = (performance.now() - loadEnded) / 1000;
      stable = written === last ? stable + 1 : 0;
      last = written;
    }
    const lost = Math.max(0, accepted - written);
    out.ingestion.push({ database, acceptedPerSecond: load.rps, written, lost, drainSeconds, errors: load.errors });
    log(
      `${database}: ${load.rps.toFixed(0)} views/s accepted, ${written} of ${accepted} written ${drainSeconds.toFixed(1)} s after the load`,
    );
  } finally {
    await processes.stopAll();
  }
}

async function countViews(url: string): Promise<number> {
  const { db, close } = await openDatabase(parseDatabaseUrl(url));
  try {
    return await db.pageView.count();
  } finally {
    await close();
  }
}

/** POSTs page views of browsers, crawlers and agents on a spread of paths, countries and referrers. */
function pageViewScript(seed: AnalyticsSeed): string {
  return jsonPostScript(
    seed.apiKey,
    [
      'local agents = { "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36", "GPTBot/1.2", "Claude-User/1.0", "curl/8.5" }',
      'local countries = { "US", "DE", "FR", "JP", "XX" }',
    ],
    [
      `  local body = '{"seller":"${seed.sellerId}","path":"/docs/page-' .. (counter % 300) .. '?q=1","status":200,"userAgent":"' .. agents[(counter % 4) + 1] .. '","clientIp":"203.0.113.' .. (counter % 250) .. '","country":"' .. countries[(counter % 5) + 1] .. '","referrerHost":"https://ref-' .. (counter % 40) .. '.example/x"}'`,
      '  return wrk.format(nil, "/v1/page-views", nil, body)',
    ],
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bench:analytics failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
