import { randomBytes } from 'node:crypto';
import { createServer, get, type IncomingMessage, type ServerResponse } from 'node:http';
import { availableParallelism } from 'node:os';
import t from 'tap';
import { seedSeller } from '../../bench/lib/seed.js';
import { childPids, eventually, exitWithin, freePort, runHub, tempDataDir, waitForStatus } from '../helpers/processes.js';

// `hub start` with the proxy as several workers sharing its port: real processes on loopback.

type Tap = Parameters<typeof tempDataDir>[0];

async function hubEnv(t: Tap, workers: string | undefined) {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const [cpPort, proxyPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const env = {
    HUB_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    HUB_MASTER_KEY: randomBytes(32).toString('hex'),
    HUB_CONTROL_PLANE_PORT: String(cpPort),
    HUB_PROXY_PORT: String(proxyPort),
    HUB_PROXY_METRICS_PORT: String(metricsPort),
    HUB_DEV_CHAIN: 'off',
    HUB_PROXY_WORKERS: workers,
  };
  return { env, cpPort, proxyPort, metricsPort };
}

/** A GET on a connection of its own (the primary hands each new connection to the next worker). */
function getOnce(port: number, path: string, host?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path, agent: false, headers: host ? { host } : {} }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

/** Requests each worker has answered, by worker number, from the metrics port. */
async function answeredByWorker(metricsPort: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const [, worker, n] of text.matchAll(/^hub_proxy_request_duration_seconds_count\{worker="(\d+)"\} (\d+)$/gm)) {
    counts.set(worker!, Number(n));
  }
  return counts;
}

t.test('by default the proxy runs a worker per core; they share the port, all serve, and a killed one comes back', async (t) => {
  // One core makes one worker, no cluster: sharing the port is then tried with two.
  const cores = availableParallelism();
  const workers = Math.max(cores, 2);
  const { env, proxyPort, metricsPort } = await hubEnv(t, cores >= 2 ? undefined : '2');
  const hub = runHub(t, ['start'], env);
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/healthz`, 200), 'the pay URL answers');
  const [primary] = childPids(hub.child.pid!, 'proxy');
  t.ok(await eventually(() => childPids(primary!, 'proxy').length === workers), `${workers} workers under the proxy`);
  t.ok(await eventually(async () => (await answeredByWorker(metricsPort)).size === workers), 'each reports its metrics');

  for (let i = 0; i < 4 * workers; i++) await getOnce(proxyPort, '/healthz');
  const served = await answeredByWorker(metricsPort);
  t.ok([...served.values()].every((n) => n > 0) && served.size === workers, `every worker answered requests (${[...served]})`);

  const [victim, ...rest] = childPids(primary!, 'proxy');
  const logged = hub.stderr().length;
  process.kill(victim!, 'SIGKILL');
  // A connection handed to the worker as it died dies with it; once the primary has seen the
  // exit, every new connection goes to a worker still running, before the new one is up.
  const exitLine = () => /^hub: proxy worker \d exited \(signal SIGKILL\) after \d+\.\d s; .*$/m.exec(hub.stderr().slice(logged))?.[0];
  t.ok(await eventually(() => exitLine() !== undefined), `one line says so: ${exitLine()}`);
  const during = await Promise.all(Array.from({ length: 10 }, () => getOnce(proxyPort, '/healthz').then((r) => r.status, String)));
  t.same(during, Array(10).fill(200), 'the port keeps serving while a worker is down');
  t.ok(
    await eventually(() => {
      const now = childPids(primary!, 'proxy');
      return now.length === workers && !now.includes(victim!) && rest.every((pid) => now.includes(pid));
    }),
    'the killed worker was replaced, the others kept',
  );
  t.ok(await eventually(async () => (await answeredByWorker(metricsPort)).size === workers), 'the new worker reports too');

  hub.child.kill('SIGTERM');
  t.equal(await exitWithin(hub, 30_000), 0, 'SIGTERM stops everything with exit 0');
});

t.test('SIGTERM drains: the workers stop accepting, finish a request in flight, then exit', async (t) => {
  const { env, cpPort, proxyPort } = await hubEnv(t, '2');
  // A seller whose API holds its answer until the test lets it go.
  let release: () => void = () => {};
  let arrived = false;
  const upstream = createServer((req: IncomingMessage, res: ServerResponse) => {
    arrived = true;
    req.resume();
    release = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('finished');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.teardown(() => upstream.close());
  const upstreamPort = (upstream.address() as { port: number }).port;
  await seedSeller(env.DATABASE_URL, env.HUB_MASTER_KEY, 'slow', `http://127.0.0.1:${upstreamPort}`);

  const hub = runHub(t, ['start'], env);
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/readyz`, 200), 'ready');
  t.ok(await waitForStatus(`http://127.0.0.1:${cpPort}/readyz`, 200));
  const slow = getOnce(proxyPort, '/work', 'slow.pay.localhost');
  t.ok(await eventually(() => arrived), 'the request reached the seller');

  hub.child.kill('SIGTERM');
  const refused = () =>
    getOnce(proxyPort, '/healthz').then(
      () => false,
      () => true,
    );
  t.ok(await eventually(refused, 15_000), 'new connections are refused once the workers stop accepting');
  t.equal(hub.child.exitCode, null, 'hub waits for the request in flight');
  release();
  t.same(await slow, { status: 200, body: 'finished' }, 'the request in flight is answered whole');
  t.equal(await exitWithin(hub, 20_000), 0, 'then hub exits 0');
});
