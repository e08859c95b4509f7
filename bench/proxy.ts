// npm run bench:proxy — hub's proxy against a bare Node proxy and nginx, each with as many
// worker processes (1 and 2 by default), plus a direct call, same load.
//
// Every target forwards GET requests to the same 1 KB JSON upstream; wrk drives each in turn
// (one thread, 50 connections, fixed duration) on loopback. Ratios are taken within this run.
// The "Node floor" rows are a bare node:http + undici proxy doing hub's header work and nothing
// else, in as many processes as hub's workers (node:cluster, as hub): how close hub comes to it
// is what hub's own code costs; nginx with as many workers is reported beside them.
// Options: BENCH_SECONDS per measurement (default 5), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS
// (default 50), BENCH_WORKERS (default "1,2"), BENCH_CPU_PROF=<dir> (hub's one-worker proxy
// writes a V8 CPU profile there when the run ends: open it as a flame graph in Chrome's DevTools
// or speedscope), BENCH_ONLY=<regular expression> (measures only the targets whose name matches,
// such as "1 worker, signed agent" while profiling). hub's rows run once per database its
// control-plane can keep (SQLite, and PostgreSQL at HUB_BENCH_PG_URL unless BENCH_POSTGRES=off):
// an identified agent's call leaves a record the control-plane stores.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, withDescendants } from './lib/cpu.js';
import { findOrInstallNginx, nginxVersion, writeNginxConfig } from './lib/nginx.js';
import { freePort, Processes, waitUntilUp } from './lib/processes.js';
import { benchPostgres } from './lib/scratch-postgres.js';
import { seedSeller } from './lib/seed.js';
import { type LoadResult, requireWrk, wrk } from './lib/wrk.js';

const here = dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const workerCounts = (process.env.BENCH_WORKERS ?? '1,2').split(',').map(Number);
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
const cpuProfileDir = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;
const log = (line: string) => console.log(line);

type Kind = 'direct' | 'nginx' | 'floor' | 'hub anonymous' | 'hub agent';
type Database = 'SQLite' | 'PostgreSQL';
type Target = {
  name: string;
  kind: Kind;
  workers: number;
  url: string;
  headers: Record<string, string>;
  proxy?: ChildProcess;
  /** hub's rows: the database its control-plane keeps, and that control-plane. */
  database?: Database;
  controlPlane?: ChildProcess;
};
/** A round's result with the CPU the proxy's processes (and hub's control-plane) spent per request. */
type Measured = LoadResult & { proxyCpuUs: number; controlPlaneCpuUs: number };

async function main() {
  await requireWrk(log);
  const processes = new Processes();
  const work = mkdtempSync(join(tmpdir(), 'hub-bench-'));
  const tsx = ['--import', 'tsx'];
  const postgres = await benchPostgres(log);
  try {
    const upstreamPort = await freePort();
    processes.start(process.execPath, [...tsx, join(here, 'servers', 'upstream.ts'), String(upstreamPort)]);
    await waitUntilUp(`http://127.0.0.1:${upstreamPort}/`);

    // hub: one control-plane per database with a seeded seller, and a proxy per worker count.
    const masterKey = randomBytes(32).toString('hex');
    const hubBin = join(here, '..', 'bin', 'hub.js');
    const databases: [Database, string][] = [['SQLite', `file:${join(work, 'hub.db')}`]];
    if (postgres) databases.push(['PostgreSQL', postgres.url]);
    const hubs = [];
    for (const [database, databaseUrl] of databases) {
      const cpPort = await freePort();
      mkdirSync(join(work, database));
      const env = {
        DATABASE_URL: databaseUrl,
        HUB_DATA_DIR: join(work, database),
        HUB_MASTER_KEY: masterKey,
        HUB_CONTROL_PLANE_PORT: String(cpPort),
        HUB_LOG_LEVEL: 'warn',
      };
      const { agentToken } = await seedSeller(databaseUrl, masterKey, 'bench', `http://127.0.0.1:${upstreamPort}`);
      const controlPlane = processes.start(process.execPath, [hubBin, 'start', 'control-plane'], env);
      await waitUntilUp(`http://127.0.0.1:${cpPort}/healthz`);
      hubs.push({ database, env, agentToken, controlPlane });
    }

    const nginx = await findOrInstallNginx(log);
    const nginxName = nginx ? nginxVersion(nginx).replace(/^nginx version: /, '') : 'nginx';
    // wrk adds its own Host unless the header is spelled exactly "Host".
    const payHost = { Host: 'bench.pay.localhost' };
    const targets: Target[] = [
      { name: 'direct (no proxy)', kind: 'direct', workers: 0, url: `http://127.0.0.1:${upstreamPort}/items`, headers: {} },
    ];
    for (const n of workerCounts) {
      const plural = n === 1 ? 'worker' : 'workers';
      if (nginx) {
        const port = await freePort();
        const dir = join(work, `nginx-${n}`);
        const conf = writeNginxConfig(dir, port, upstreamPort, n);
        const proxy = processes.start(nginx, ['-p', dir, '-c', conf, '-g', 'daemon off;']);
        await waitUntilUp(`http://127.0.0.1:${port}/`);
        targets.push({
          name: `${nginxName}, ${n} ${plural}`,
          kind: 'nginx',
          workers: n,
          url: `http://127.0.0.1:${port}/items`,
          headers: {},
          proxy,
        });
      }
      const floorPort = await freePort();
      const floor = processes.start(process.execPath, [
        ...tsx,
        join(here, 'servers', 'undici-floor.ts'),
        String(floorPort),
        String(upstreamPort),
        String(n),
      ]);
      await waitUntilUp(`http://127.0.0.1:${floorPort}/`);
      targets.push({
        name: `Node floor, ${n} ${plural}`,
        kind: 'floor',
        workers: n,
        url: `http://127.0.0.1:${floorPort}/items`,
        headers: {},
        proxy: floor,
      });

      for (const { database, env, agentToken, controlPlane } of hubs) {
        const proxyPort = await freePort();
        const profile = cpuProfileDir && n === 1 && database === 'SQLite' ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : [];
        const hub = processes.start(process.execPath, [...profile, hubBin, 'start', 'proxy'], {
          ...env,
          HUB_PROXY_PORT: String(proxyPort),
          HUB_PROXY_WORKERS: String(n),
        });
        await waitUntilUp(`http://127.0.0.1:${proxyPort}/readyz`);
        const url = `http://127.0.0.1:${proxyPort}/items`;
        const common = { workers: n, url, proxy: hub, database, controlPlane };
        targets.push({
          name: `hub (${database}), ${n} ${plural}, signed anonymous GET`,
          kind: 'hub anonymous',
          headers: payHost,
          ...common,
        });
        targets.push({
          name: `hub (${database}), ${n} ${plural}, signed agent GET`,
          kind: 'hub agent',
          headers: { ...payHost, authorization: `Bearer ${agentToken}` },
          ...common,
        });
      }
    }

    const measure = async (target: Target, seconds: number): Promise<Measured> => {
      const proxyPids = target.proxy ? withDescendants(target.proxy.pid!) : [];
      const cpPids = target.controlPlane ? [target.controlPlane.pid!] : [];
      const [proxyBefore, cpBefore] = [cpuMs(proxyPids), cpuMs(cpPids)];
      const result = await wrk(target.url, { connections, seconds, headers: target.headers });
      const perRequestUs = (ms: number) => (result.requests ? (ms * 1000) / result.requests : Number.NaN);
      return {
        ...result,
        proxyCpuUs: perRequestUs(cpuMs(proxyPids) - proxyBefore),
        controlPlaneCpuUs: perRequestUs(cpuMs(cpPids) - cpBefore),
      };
    };

    const measured = only ? targets.filter((target) => target.kind === 'direct' || only.test(target.name)) : targets;
    // Warm every target (JIT, pools, caches) before measuring.
    for (const target of measured) await measure(target, 2);

    // Rounds interleave the targets, so a drift in the machine's load hits every row alike; each
    // row reports its median round.
    const runs = new Map<Target, Measured[]>(measured.map((target) => [target, []]));
    for (let round = 1; round <= rounds; round++) {
      for (const target of measured) {
        const result = await measure(target, seconds);
        runs.get(target)!.push(result);
        log(`round ${round}, ${target.name}: ${result.rps.toFixed(0)} req/s`);
      }
    }
    const results = new Map([...runs].map(([target, list]) => [target, median(list)]));
    report(
      results,
      databases.map(([database]) => database),
    );
  } finally {
    await processes.stopAll();
    await postgres?.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

function report(results: Map<Target, Measured>, databases: Database[]): void {
  const find = (kind: Kind, workers: number, database?: Database) =>
    [...results].find(([t]) => t.kind === kind && (kind === 'direct' || t.workers === workers) && t.database === database)?.[1];
  const direct = find('direct', 0)!;
  console.log(
    `\nGET, 1 KB JSON upstream, wrk -t1 -c${connections} -d${seconds}s, median of ${rounds} interleaved rounds, loopback, ${new Date().toISOString().slice(0, 10)}\n`,
  );
  console.log(
    '| target | req/s | p50 ms | p99 ms | errors | proxy CPU µs/req | control-plane CPU µs/req | vs Node floor, as many workers | vs nginx, as many workers |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  const ratio = (a: number, b: number | undefined) => (b ? `${(a / b).toFixed(2)}×` : 'n/a');
  const us = (v: number) => (Number.isFinite(v) && v > 0 ? v.toFixed(0) : '');
  for (const [target, r] of results) {
    const floor = target.kind === 'direct' ? undefined : find('floor', target.workers);
    const nginx = target.kind === 'direct' ? undefined : find('nginx', target.workers);
    console.log(
      `| ${target.name} | ${r.rps.toFixed(0)} | ${r.p50ms.toFixed(2)} | ${r.p99ms.toFixed(2)} | ${r.errors} | ${us(r.proxyCpuUs)} | ${us(r.controlPlaneCpuUs)} | ${ratio(r.rps, floor?.rps)} | ${ratio(r.rps, nginx?.rps)} |`,
    );
  }
  console.log(`\ndirect: ${direct.rps.toFixed(0)} req/s`);
  for (const database of databases) {
    for (const n of workerCounts) {
      const [floor, nginx] = [find('floor', n), find('nginx', n)];
      const [anonymous, agent] = [find('hub anonymous', n, database), find('hub agent', n, database)];
      if (!floor || !anonymous || !agent) continue;
      console.log(
        `hub (${database}), ${n} worker(s): anonymous / Node floor ${ratio(anonymous.rps, floor.rps)} (target ≥ 0.85×), agent / Node floor ${ratio(agent.rps, floor.rps)} (target ≥ 0.70×), ` +
          `p99 / Node floor's ${ratio(anonymous.p99ms, floor.p99ms)} anonymous, ${ratio(agent.p99ms, floor.p99ms)} agent (target ≤ 1.5×); ` +
          `Node floor / nginx ${ratio(floor.rps, nginx?.rps)}, hub anonymous / nginx ${ratio(anonymous.rps, nginx?.rps)}`,
      );
    }
    if (workerCounts.length > 1) {
      const [a, b] = [workerCounts[0]!, workerCounts.at(-1)!];
      const gain = (kind: Kind, database?: Database) => ratio(find(kind, b, database)?.rps ?? Number.NaN, find(kind, a, database)?.rps);
      console.log(
        `${b} workers against ${a}: hub (${database}) anonymous ${gain('hub anonymous', database)}, agent ${gain('hub agent', database)}, Node floor ${gain('floor')}, nginx ${gain('nginx')}`,
      );
    }
  }
}

/** The round with the median throughput (its latencies and CPU come with it). */
function median(list: Measured[]): Measured {
  return [...list].sort((a, b) => a.rps - b.rps)[Math.floor(list.length / 2)]!;
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bench:proxy failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
