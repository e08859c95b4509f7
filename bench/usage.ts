// npm run bench:usage — usage checks and idempotent reports per second, over HTTP on loopback.
//
// For each database (SQLite; PostgreSQL when one answers at HUB_BENCH_PG_URL, default
// postgresql://postgres@127.0.0.1:5432/postgres, on a scratch database dropped afterwards;
// BENCH_POSTGRES=off skips it),
// seeded with 200 agents that each hold a credit access and a forwarded request, and for each
// binding of the usage routes:
//   REST    `hub start control-plane` as it is: the routes' procedures behind the REST API
//   direct  the same control-plane with the direct binding (control-plane/rest/hot-routes.ts) in front
// wrk drives, with 1 and with 50 connections (one thread, fixed duration):
//   check   POST /v1/usage/check, one item
//   report  POST /v1/usage, every report a new idempotency key (draws credit, records an event)
//   replay  POST /v1/usage, keys already recorded (answered duplicate: true, nothing changes)
// Options: BENCH_SECONDS (default 10).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, Processes, waitUntilUp } from './lib/processes.js';
import { benchPostgres } from './lib/scratch-postgres.js';
import { type UsageLoad, writeUsageScript } from './lib/usage-scripts.js';
import { seedUsage } from './lib/usage-seed.js';
import { type LoadResult, requireWrk, wrk } from './lib/wrk.js';

const here = dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const log = (line: string) => console.log(line);
const AGENTS = 200;
const LOADS: UsageLoad[] = ['check', 'report', 'replay'];
const CLIENTS = [1, 50];
const TARGETS: Partial<Record<UsageLoad, number>> = { check: 5_000, report: 2_000 };
const BINDINGS = ['REST', 'direct'] as const;
type Binding = (typeof BINDINGS)[number];

type Row = { database: string; binding: Binding; load: UsageLoad; clients: number; result: LoadResult };

async function main() {
  await requireWrk(log);
  const rows: Row[] = [];
  await measure('SQLite', (work) => `file:${join(work, 'hub.db')}`, rows);
  const scratch = await benchPostgres(log);
  if (scratch) {
    try {
      await measure('PostgreSQL', () => scratch.url, rows);
    } finally {
      await scratch.drop();
    }
  }

  console.log(
    `\nUsage API over HTTP on loopback, wrk -t1, ${seconds} s per row, ${AGENTS} agents, ${new Date().toISOString().slice(0, 10)}\n`,
  );
  console.log('| database | binding | call | clients | req/s | p50 ms | p99 ms | errors |');
  console.log('|---|---|---|---:|---:|---:|---:|---:|');
  for (const { database, binding, load, clients, result: r } of rows) {
    console.log(
      `| ${database} | ${binding} | ${describe(load)} | ${clients} | ${r.rps.toFixed(0)} | ${r.p50ms.toFixed(2)} | ${r.p99ms.toFixed(2)} | ${r.errors} |`,
    );
  }
  console.log('');
  for (const database of new Set(rows.map((r) => r.database))) {
    for (const binding of BINDINGS) {
      for (const [load, target] of Object.entries(TARGETS) as [UsageLoad, number][]) {
        const best = Math.max(
          ...rows.filter((r) => r.database === database && r.binding === binding && r.load === load).map((r) => r.result.rps),
        );
        console.log(
          `${database}, ${binding} binding, ${describe(load)}: ${best.toFixed(0)}/s at best (target ≥ ${target}) ${best >= target ? 'met' : 'MISSED'}`,
        );
      }
    }
  }
  // At 1 client a call's latency is the inverse of its rate: PostgreSQL's target is twice SQLite's at most.
  for (const binding of BINDINGS) {
    for (const load of Object.keys(TARGETS) as UsageLoad[]) {
      const at1 = (database: string) =>
        rows.find((r) => r.database === database && r.binding === binding && r.load === load && r.clients === 1)?.result.rps;
      const sqlite = at1('SQLite');
      const postgres = at1('PostgreSQL');
      if (!sqlite || !postgres) continue;
      const ratio = sqlite / postgres;
      console.log(
        `PostgreSQL, ${binding} binding, ${describe(load)}, 1 client: ${ratio.toFixed(1)}× SQLite's latency (target ≤ 2×) ${ratio <= 2 ? 'met' : 'MISSED'}`,
      );
    }
  }
}

/** One database: seed it, then for each binding start a control-plane on it, warm each load up and measure it. */
async function measure(database: string, databaseUrl: (work: string) => string, rows: Row[]): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'hub-bench-usage-'));
  try {
    const url = databaseUrl(work);
    const seed = await seedUsage(url, AGENTS);
    for (const binding of BINDINGS) {
      const processes = new Processes();
      try {
        const port = await freePort();
        const env = {
          DATABASE_URL: url,
          HUB_DATA_DIR: work,
          HUB_MASTER_KEY: randomBytes(32).toString('hex'),
          HUB_CONTROL_PLANE_PORT: String(port),
          HUB_LOG_LEVEL: 'warn',
        };
        if (binding === 'REST') processes.start(process.execPath, [join(here, '..', 'bin', 'hub.js'), 'start', 'control-plane'], env);
        else processes.start(process.execPath, ['--import', 'tsx', join(here, 'lib', 'usage-direct-server.ts'), String(port)], env);
        await waitUntilUp(`http://127.0.0.1:${port}/healthz`);
        const target = `http://127.0.0.1:${port}`;

        for (const load of LOADS) {
          // The warm-up also records the keys that the replay runs send again.
          const warmPrefix = `${binding}-${load}-warm`;
          await wrk(target, { connections: 50, seconds: 2, script: writeUsageScript(work, load, seed, warmPrefix) });
          for (const clients of CLIENTS) {
            const prefix = load === 'replay' ? warmPrefix : `${binding}-${load}-${clients}`;
            const result = await wrk(target, { connections: clients, seconds, script: writeUsageScript(work, load, seed, prefix) });
            rows.push({ database, binding, load, clients, result });
            console.log(
              `measured ${database}, ${binding}, ${describe(load)}, ${clients} client(s): ${result.rps.toFixed(0)} req/s, ${result.errors} errors`,
            );
          }
        }
      } finally {
        await processes.stopAll();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function describe(load: UsageLoad): string {
  return { check: 'check', report: 'report (new key)', replay: 'report (replayed key)' }[load];
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bench:usage failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
