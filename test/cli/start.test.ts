import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { seedCompiledContracts } from '../helpers/chain.js';
import { childPids, eventually, exitWithin, freePort, type RunningHub, runHub, tempDataDir, waitForStatus } from '../helpers/processes.js';

// Each case waits on processes starting and stopping far more than it computes: they run side by side.
t.jobs = 3;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function exitedWithin(pid: number, timeoutMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    if (!alive(pid)) return true;
  }
  return false;
}

/** A data directory and two free ports, as `hub start` reads them from the environment. */
async function hubEnv(t: Parameters<typeof tempDataDir>[0]) {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const cpPort = await freePort();
  const proxyPort = await freePort();
  const env = {
    HUB_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    HUB_CONTROL_PLANE_PORT: String(cpPort),
    HUB_PROXY_PORT: String(proxyPort),
    // The local chain `hub start` runs in development has a test of its own.
    HUB_DEV_CHAIN: 'off',
  };
  return { env, cpPort, proxyPort };
}

/** `hub start` with both processes on their own ports. */
async function startBoth(t: Parameters<typeof tempDataDir>[0]) {
  const { env, cpPort, proxyPort } = await hubEnv(t);
  return { hub: runHub(t, ['start'], env), cpPort, proxyPort };
}

/** Kills the supervisor's proxy and waits until a new one answers; the line the supervisor logged for it. */
async function crashProxy(hub: RunningHub, proxyPort: number): Promise<string | undefined> {
  const [pid] = childPids(hub.child.pid!, 'proxy');
  const logged = hub.stderr().length;
  process.kill(pid!, 'SIGKILL');
  const line = () => /^hub: proxy exited.*$/m.exec(hub.stderr().slice(logged))?.[0];
  const back = await eventually(() => line() !== undefined && childPids(hub.child.pid!, 'proxy').some((p) => p !== pid));
  return back && (await waitForStatus(`http://127.0.0.1:${proxyPort}/healthz`, 200)) ? line() : undefined;
}

t.test('hub start brings up both processes on SQLite, restarts a crashed one, stops on SIGTERM', async (t) => {
  const { hub, cpPort, proxyPort } = await startBoth(t);

  t.ok(await waitForStatus(`http://127.0.0.1:${cpPort}/healthz`, 200), 'control-plane /healthz answers 200');
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/healthz`, 200), 'proxy /healthz answers 200');
  t.ok(await waitForStatus(`http://127.0.0.1:${cpPort}/readyz`, 200), 'control-plane is ready (database reachable)');
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/readyz`, 200), 'proxy is ready (control-plane reachable over tRPC)');

  const unknown = await fetch(`http://127.0.0.1:${proxyPort}/anything`, { headers: { host: 'nobody.pay.localhost' } });
  t.equal(unknown.status, 404);
  t.same(await unknown.json(), { error: 'seller_not_found' }, 'an unknown pay host is resolved through the control-plane');

  const children = childPids(hub.child.pid!);
  t.equal(children.length, 2, 'two child processes');
  process.kill(children[1]!, 'SIGKILL');
  t.ok(
    (await waitForStatus(`http://127.0.0.1:${proxyPort}/healthz`, 200)) && (await waitForStatus(`http://127.0.0.1:${cpPort}/healthz`, 200)),
    'both answer again after a crash',
  );
  t.ok(await eventually(() => childPids(hub.child.pid!).length === 2), 'the crashed process was restarted');

  hub.child.kill('SIGTERM');
  t.equal(await exitWithin(hub, 15_000), 0, 'SIGTERM stops everything with exit 0');
});

t.test('a process that ran a while is restarted at once', async (t) => {
  const { env, proxyPort } = await hubEnv(t);
  // Every run counts as a while here (one of 1 ms): each crash is restarted at once.
  const atOnce = runHub(t, ['start'], { ...env, HUB_RESTART_HEALTHY_AFTER_MS: '1' });
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/healthz`, 200));
  for (let i = 0; i < 2; i++) {
    t.match(
      await crashProxy(atOnce, proxyPort),
      /^hub: proxy exited \(signal SIGKILL\) after \d+\.\d s; it had run 0\.001 s or more: restarting at once$/,
      `crash ${i + 1}: no wait`,
    );
  }
  atOnce.child.kill('SIGTERM');
  t.equal(await exitWithin(atOnce, 15_000), 0);
});

t.test('a process that crashes soon after starting backs off', async (t) => {
  const { env, proxyPort } = await hubEnv(t);
  // No run is a while here: each crash is one more of a crash loop, and the wait doubles.
  const looping = runHub(t, ['start'], { ...env, HUB_RESTART_HEALTHY_AFTER_MS: '600000' });
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/healthz`, 200));
  for (const [i, wait] of [500, 1_000, 2_000].entries()) {
    t.match(
      await crashProxy(looping, proxyPort),
      new RegExp(
        `^hub: proxy exited \\(signal SIGKILL\\) after \\d+\\.\\d s; exit ${i + 1} in a row within 600 s of starting: restarting in ${wait} ms$`,
      ),
      `crash ${i + 1}: ${wait} ms`,
    );
  }
  looping.child.kill('SIGTERM');
  t.equal(await exitWithin(looping, 15_000), 0);
});

t.test('in development, hub start takes payments on a local chain it runs itself, and stops it', async (t) => {
  const { env, cpPort, proxyPort } = await hubEnv(t);
  const chainFile = join(env.HUB_DATA_DIR, 'chain.json');
  await seedCompiledContracts(env.HUB_DATA_DIR);
  const hub = runHub(t, ['start'], { ...env, HUB_DEV_CHAIN: 'auto', HUB_ENV: 'development', HUB_LOG_LEVEL: 'info' });
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/readyz`, 200, 120_000), 'ready');
  t.ok(await waitForStatus(`http://127.0.0.1:${cpPort}/readyz`, 200));
  t.ok(existsSync(chainFile), 'the chain described itself where the rail looks');
  const lines = hub
    .stdout()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { msg: string; pid?: number });
  const said = lines.filter((l) => /local development chain/.test(l.msg));
  t.equal(said.length, 1, 'one line says so');
  t.match(said[0]?.msg, 'no payment rail configured: took payments on a local development chain');
  t.ok(
    lines.some((l) => l.msg === 'taking payments'),
    'the control-plane started with it as its rail',
  );
  t.ok(
    lines.some((l) => l.msg === 'request' && (l as { path?: string }).path === '/readyz'),
    'requests are in the access log',
  );
  const anvilPid = said[0]!.pid!;
  t.ok(alive(anvilPid), 'anvil runs');

  hub.child.kill('SIGTERM');
  t.equal(await exitWithin(hub, 15_000), 0, 'SIGTERM stops everything with exit 0');
  t.ok(await exitedWithin(anvilPid, 10_000), 'the chain stopped with hub');
  t.notOk(existsSync(chainFile), 'and its description is gone, so the next start runs a new one');
});

t.test('SIGTERM to `npm start` stops hub too, though npm does not pass the signal on', async (t) => {
  const { env, cpPort, proxyPort } = await hubEnv(t);
  const npm = spawn('npm', ['start'], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { ...process.env, ...env, HUB_LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  t.teardown(() => npm.kill('SIGKILL'));
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/healthz`, 200), 'running under npm');
  t.ok(await waitForStatus(`http://127.0.0.1:${cpPort}/healthz`, 200));
  npm.kill('SIGTERM');
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/healthz`, 0, 15_000), 'the proxy is gone');
  t.ok(await waitForStatus(`http://127.0.0.1:${cpPort}/healthz`, 0, 15_000), 'the control-plane is gone');
});

t.test('a killed supervisor takes its processes with it', async (t) => {
  const { hub, cpPort, proxyPort } = await startBoth(t);
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/healthz`, 200));
  t.ok(await waitForStatus(`http://127.0.0.1:${cpPort}/healthz`, 200));
  const children = childPids(hub.child.pid!);
  hub.child.kill('SIGKILL');
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/healthz`, 0, 15_000), 'the proxy is gone');
  t.ok(await waitForStatus(`http://127.0.0.1:${cpPort}/healthz`, 0, 15_000), 'the control-plane is gone');
  for (const pid of children) t.ok(await exitedWithin(pid, 15_000), `process ${pid} exited`);
});

t.test('hub start proxy alone is live but not ready without a control-plane', async (t) => {
  const { dataDir } = tempDataDir(t);
  const proxyPort = await freePort();
  const deadPort = await freePort();
  const hub = runHub(t, ['start', 'proxy'], {
    HUB_DATA_DIR: dataDir,
    HUB_PROXY_PORT: String(proxyPort),
    HUB_CONTROL_PLANE_PORT: String(deadPort),
  });
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/healthz`, 200));
  const ready = await fetch(`http://127.0.0.1:${proxyPort}/readyz`);
  t.equal(ready.status, 503);
  t.same(await ready.json(), { status: 'control_plane_unreachable' });
  hub.child.kill('SIGTERM');
  t.equal(await exitWithin(hub, 10_000), 0);
});

t.test('start-up failures print one clear line and exit non-zero', async (t) => {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const busy = await freePort();
  const holder = runHub(t, ['start', 'control-plane'], {
    HUB_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    HUB_CONTROL_PLANE_PORT: String(busy),
  });
  t.ok(await waitForStatus(`http://127.0.0.1:${busy}/healthz`, 200));

  const cases: [string, string[], Record<string, string>, RegExp][] = [
    ['bad DATABASE_URL', ['start'], { DATABASE_URL: 'mysql://db/hub' }, /DATABASE_URL must start with file: \(SQLite\) or postgresql:\/\//],
    ['bad port', ['start'], { HUB_PROXY_PORT: '70000' }, /HUB_PROXY_PORT must be between 1 and 65535/],
    [
      'unreachable PostgreSQL',
      ['start', 'control-plane'],
      { DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/hub' },
      /cannot reach PostgreSQL at postgresql:\/\/127\.0\.0\.1:1\/hub/,
    ],
    [
      'missing master key in production',
      ['start'],
      { HUB_ENV: 'production', DATABASE_URL: databaseUrl },
      /HUB_MASTER_KEY is required in production/,
    ],
    [
      'port in use',
      ['start', 'control-plane'],
      { DATABASE_URL: databaseUrl, HUB_CONTROL_PLANE_PORT: String(busy) },
      new RegExp(`cannot listen on 127\\.0\\.0\\.1:${busy}: the port is already in use`),
    ],
  ];
  for (const [name, args, env, message] of cases) {
    const run = runHub(t, args, { HUB_DATA_DIR: dataDir, HUB_DEV_CHAIN: 'off', ...env });
    const code = await exitWithin(run, 20_000);
    t.equal(code, 1, `${name}: exit 1`);
    t.match(run.stderr(), message, `${name}: says why`);
    t.notMatch(run.stderr(), /\n\s+at /, `${name}: no stack trace`);
  }
  holder.child.kill('SIGTERM');
  await exitWithin(holder, 10_000);
});
