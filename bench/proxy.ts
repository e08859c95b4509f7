// npm run bench:proxy — hub's proxy against nginx, http-proxy-3 and a direct call, same load.
//
// Every target forwards GET requests to the same 1 KB JSON upstream; wrk drives each in turn
// (one thread, 50 connections, fixed duration) on loopback. Ratios are taken within this run.
// The "Node floor" row is a bare node:http + undici proxy doing hub's header work and nothing
// else: how close hub comes to it is what hub's own code costs; its ratio to nginx is the most
// any single-process Node proxy reaches on the machine.
// Options: BENCH_SECONDS per measurement (default 5), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 50).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findOrInstallNginx, nginxVersion, writeNginxConfig } from './lib/nginx.js';
import { freePort, Processes, waitUntilUp } from './lib/processes.js';
import { seedSeller } from './lib/seed.js';
import { type LoadResult, requireWrk, wrk } from './lib/wrk.js';

const here = dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const log = (line: string) => console.log(line);
/** node:http + one undici Pool doing only hub's header work: the least a Node proxy does. */
const FLOOR = 'Node floor (node:http + undici, headers only)';

async function main() {
  await requireWrk(log);
  const processes = new Processes();
  const work = mkdtempSync(join(tmpdir(), 'hub-bench-'));
  const tsx = ['--import', 'tsx'];
  try {
    const upstreamPort = await freePort();
    processes.start(process.execPath, [...tsx, join(here, 'servers', 'upstream.ts'), String(upstreamPort)]);
    await waitUntilUp(`http://127.0.0.1:${upstreamPort}/`);

    // hub: a control-plane and one proxy process, over SQLite, with a seeded seller.
    const masterKey = randomBytes(32).toString('hex');
    const cpPort = await freePort();
    const proxyPort = await freePort();
    const hubEnv = {
      DATABASE_URL: `file:${join(work, 'hub.db')}`,
      HUB_DATA_DIR: work,
      HUB_MASTER_KEY: masterKey,
      HUB_CONTROL_PLANE_PORT: String(cpPort),
      HUB_PROXY_PORT: String(proxyPort),
      HUB_LOG_LEVEL: 'warn',
    };
    const { agentToken } = await seedSeller(hubEnv.DATABASE_URL, masterKey, 'bench', `http://127.0.0.1:${upstreamPort}`);
    const hubBin = join(here, '..', 'bin', 'hub.js');
    processes.start(process.execPath, [hubBin, 'start', 'control-plane'], hubEnv);
    await waitUntilUp(`http://127.0.0.1:${cpPort}/healthz`);
    processes.start(process.execPath, [hubBin, 'start', 'proxy'], hubEnv);
    await waitUntilUp(`http://127.0.0.1:${proxyPort}/readyz`);

    // The reference proxies in front of the same upstream: each script takes its port and the upstream's.
    const startReference = async (script: string) => {
      const port = await freePort();
      processes.start(process.execPath, [...tsx, join(here, 'servers', script), String(port), String(upstreamPort)]);
      await waitUntilUp(`http://127.0.0.1:${port}/`);
      return port;
    };
    const hp3Port = await startReference('http-proxy-3.ts');
    const floorPort = await startReference('undici-floor.ts');

    let nginxPort: number | undefined;
    const nginx = await findOrInstallNginx(log);
    if (nginx) {
      nginxPort = await freePort();
      const conf = writeNginxConfig(join(work, 'nginx'), nginxPort, upstreamPort);
      processes.start(nginx, ['-p', join(work, 'nginx'), '-c', conf, '-g', 'daemon off;']);
      await waitUntilUp(`http://127.0.0.1:${nginxPort}/`);
    }

    // wrk adds its own Host unless the header is spelled exactly "Host".
    const payHost = { Host: 'bench.pay.localhost' };
    const targets: [string, string, Record<string, string>][] = [
      ['direct (no proxy)', `http://127.0.0.1:${upstreamPort}/items`, {}],
      ...(nginxPort
        ? ([[nginxVersion(nginx!).replace(/^nginx version: /, ''), `http://127.0.0.1:${nginxPort}/items`, {}]] as [
            string,
            string,
            Record<string, string>,
          ][])
        : []),
      ['http-proxy-3 1.23', `http://127.0.0.1:${hp3Port}/items`, {}],
      [FLOOR, `http://127.0.0.1:${floorPort}/items`, {}],
      ['hub, signed anonymous GET', `http://127.0.0.1:${proxyPort}/items`, payHost],
      ['hub, signed agent GET', `http://127.0.0.1:${proxyPort}/items`, { ...payHost, authorization: `Bearer ${agentToken}` }],
    ];

    // Warm every target (JIT, pools, caches) before measuring.
    for (const [, url, headers] of targets) await wrk(url, { connections, seconds: 2, headers });

    // Rounds interleave the targets, so a drift in the machine's load hits every row alike; each
    // row reports its median round.
    const runs = new Map<string, LoadResult[]>(targets.map(([name]) => [name, []]));
    for (let round = 1; round <= rounds; round++) {
      for (const [name, url, headers] of targets) {
        const result = await wrk(url, { connections, seconds, headers });
        runs.get(name)!.push(result);
        log(`round ${round}, ${name}: ${result.rps.toFixed(0)} req/s`);
      }
    }
    const results = new Map([...runs].map(([name, list]) => [name, median(list)]));

    const direct = results.get('direct (no proxy)')!;
    const nginxResult = nginxPort ? [...results.entries()][1]![1] : undefined;
    console.log(
      `\nGET, 1 KB JSON upstream, wrk -t1 -c${connections} -d${seconds}s, median of ${rounds} interleaved rounds, loopback, ${new Date().toISOString().slice(0, 10)}\n`,
    );
    console.log('| target | req/s | p50 ms | p99 ms | errors | vs direct | vs nginx |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const [name, r] of results) {
      const vsNginx = nginxResult ? `${(r.rps / nginxResult.rps).toFixed(2)}×` : 'n/a';
      console.log(
        `| ${name} | ${r.rps.toFixed(0)} | ${r.p50ms.toFixed(2)} | ${r.p99ms.toFixed(2)} | ${r.errors} | ${(r.rps / direct.rps).toFixed(2)}× | ${vsNginx} |`,
      );
    }
    const hub = results.get('hub, signed anonymous GET')!;
    if (nginxResult) {
      const throughput = hub.rps / nginxResult.rps;
      const p99 = hub.p99ms / nginxResult.p99ms;
      console.log(`\nhub/nginx throughput ${throughput.toFixed(2)}× (target ≥ 0.60×), hub/nginx p99 ${p99.toFixed(2)}× (target ≤ 2×)`);
    }
    console.log(`hub/direct throughput ${(hub.rps / direct.rps).toFixed(2)}×`);
    const floor = results.get(FLOOR)!;
    console.log(`hub/Node floor throughput ${(hub.rps / floor.rps).toFixed(2)}× (what hub adds to the least a Node proxy does)`);
    if (nginxResult)
      console.log(
        `Node floor/nginx throughput ${(floor.rps / nginxResult.rps).toFixed(2)}× (the ceiling for any one-process Node proxy here)`,
      );
  } finally {
    await processes.stopAll();
    rmSync(work, { recursive: true, force: true });
  }
}

/** The round with the median throughput (its latencies come with it). */
function median(list: LoadResult[]): LoadResult {
  return [...list].sort((a, b) => a.rps - b.rps)[Math.floor(list.length / 2)]!;
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bench:proxy failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
