import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { bootstrap } from '../../control-plane/bootstrap.js';
import { startControlPlane } from '../../control-plane/main.js';
import { exitWithin, freePort, runHub, tempDataDir } from '../helpers/processes.js';

// The master key seals every seller's signing secret. A key that cannot open them must stop
// start-up with one clear line, not let hub answer 500 on every signed call later.

// Each case starts control-planes and waits on them more than it computes: they run side by side.
t.jobs = 4;

const keyA = randomBytes(32).toString('hex');
const keyB = randomBytes(32).toString('hex');

async function environment(t: { teardown: (fn: () => unknown) => void }) {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const port = await freePort();
  return { HUB_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, HUB_CONTROL_PLANE_PORT: String(port), HUB_LOG_LEVEL: 'silent' };
}
type Env = Awaited<ReturnType<typeof environment>>;

/** Starts a control-plane under `env`, creates a seller with a signing secret and an encryption key (both sealed), stops. */
async function sealOneSecret(
  env: Env & { HUB_MASTER_KEY?: string },
  sealed: ('signing-secrets' | 'encryption-keys')[] = ['signing-secrets', 'encryption-keys'],
) {
  const cp = await startControlPlane(env);
  try {
    const { apiKey } = await bootstrap(cp.db, { email: 'owner@example.com', organizationName: 'Acme' });
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`http://127.0.0.1:${cp.port}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`${path}: ${res.status}`);
      return (await res.json()) as Record<string, { id: string }>;
    };
    const { seller } = await post('/v1/sellers', { name: 'Weather', slug: 'weather', upstreamBaseUrl: 'https://api.weather.example' });
    for (const kind of sealed) await post(`/v1/sellers/${seller!.id}/${kind}`, {});
  } finally {
    await cp.stop();
  }
}

const wrongKey =
  /the master key does not open the secrets sealed in sqlite:.*hub\.db: start hub with the key this database was created with/;

t.test('a different HUB_MASTER_KEY on the same database stops start-up with one line', async (t) => {
  const env = await environment(t);
  await sealOneSecret({ ...env, HUB_MASTER_KEY: keyA });
  await t.rejects(startControlPlane({ ...env, HUB_MASTER_KEY: keyB }), wrongKey);
  const cp = await startControlPlane({ ...env, HUB_MASTER_KEY: keyA });
  await cp.stop();
  t.pass('the right key still starts');
});

t.test('a database holding only encryption keys is checked the same way', async (t) => {
  const env = await environment(t);
  await sealOneSecret({ ...env, HUB_MASTER_KEY: keyA }, ['encryption-keys']);
  await t.rejects(startControlPlane({ ...env, HUB_MASTER_KEY: keyB }), wrongKey);
  await (await startControlPlane({ ...env, HUB_MASTER_KEY: keyA })).stop();
});

t.test('a database with nothing sealed starts under any key', async (t) => {
  const env = await environment(t);
  await (await startControlPlane({ ...env, HUB_MASTER_KEY: keyA })).stop();
  const cp = await startControlPlane({ ...env, HUB_MASTER_KEY: keyB });
  await cp.stop();
  t.pass();
});

t.test('HUB_MASTER_KEY and a different master.key file are refused, whichever sealed the data', async (t) => {
  const env = await environment(t);
  await sealOneSecret(env); // the development key file is created and used
  const fileKey = readFileSync(join(env.HUB_DATA_DIR, 'master.key'), 'utf8').trim();
  await t.rejects(startControlPlane({ ...env, HUB_MASTER_KEY: keyB }), /HUB_MASTER_KEY differs from the key in .*master\.key/);
  const cp = await startControlPlane({ ...env, HUB_MASTER_KEY: fileKey });
  await cp.stop();
  t.pass('the same key in both places is fine');
});

t.test('a key file that is not a key is one clear line', async (t) => {
  const env = await environment(t);
  writeFileSync(join(env.HUB_DATA_DIR, 'master.key'), 'not a key\n');
  await t.rejects(startControlPlane(env), /master\.key does not hold a 32-byte key/);
});

t.test('hub rotate-key re-seals under HUB_NEW_MASTER_KEY; only the new key starts afterwards', async (t) => {
  const env = await environment(t);
  await sealOneSecret({ ...env, HUB_MASTER_KEY: keyA });
  const run = runHub(t, ['rotate-key'], { ...env, HUB_MASTER_KEY: keyA, HUB_NEW_MASTER_KEY: keyB });
  t.equal(await exitWithin(run, 30_000), 0, run.stderr());
  t.match(run.stdout(), /^re-sealed 2 secret\(s\) in sqlite:.*; start hub with HUB_MASTER_KEY set to the new key\n$/);
  await t.rejects(startControlPlane({ ...env, HUB_MASTER_KEY: keyA }), wrongKey);
  const cp = await startControlPlane({ ...env, HUB_MASTER_KEY: keyB });
  await cp.stop();

  const wrong = runHub(t, ['rotate-key'], { ...env, HUB_MASTER_KEY: keyA, HUB_NEW_MASTER_KEY: randomBytes(32).toString('hex') });
  t.equal(await exitWithin(wrong, 30_000), 1, 'rotating from a key that does not open the secrets changes nothing');
  t.match(wrong.stderr(), /the current master key does not open every sealed secret; nothing was changed/);
  await (await startControlPlane({ ...env, HUB_MASTER_KEY: keyB })).stop();
});

t.test('hub rotate-key on a development key file replaces the file', async (t) => {
  const env = await environment(t);
  await sealOneSecret(env);
  const file = join(env.HUB_DATA_DIR, 'master.key');
  const before = readFileSync(file, 'utf8');
  const run = runHub(t, ['rotate-key'], env);
  t.equal(await exitWithin(run, 30_000), 0, run.stderr());
  t.match(run.stdout(), /^re-sealed 2 secret\(s\) in sqlite:.*; the new key is in .*master\.key\n$/);
  t.not(readFileSync(file, 'utf8'), before);
  const cp = await startControlPlane(env);
  await cp.stop();
  await t.rejects(startControlPlane({ ...env, HUB_MASTER_KEY: before.trim() }), /differs from the key in/);
});

t.test('hub start with a wrong master key stops with one line, however slowly the control-plane starts', async (t) => {
  const env = await environment(t);
  await sealOneSecret({ ...env, HUB_MASTER_KEY: keyA });
  // Another process holding the database's write lock keeps start-up waiting in its migrations,
  // past the first seconds in which the supervisor takes any exit for a start-up error.
  const lock = new Database(env.DATABASE_URL.slice('file:'.length));
  t.teardown(() => lock.close());
  lock.exec('BEGIN IMMEDIATE');
  const hub = runHub(t, ['start'], { ...env, HUB_MASTER_KEY: keyB, HUB_PROXY_PORT: String(await freePort()), HUB_DEV_CHAIN: 'off' });
  t.ok(await controlPlaneRunsFor(hub.child.pid!, 6, 60_000), 'the control-plane waits on the lock');
  lock.exec('ROLLBACK');

  t.equal(await exitWithin(hub, 60_000), 1, 'hub stops, exit 1');
  const lines = hub.stderr().split('\n').filter(Boolean);
  t.equal(lines.length, 1, `one line: ${hub.stderr()}`);
  t.match(lines[0], wrongKey);
  t.notMatch(hub.stderr(), /restarting/);
});

/** Whether the supervisor `pid` runs a control-plane that has been up `seconds`, within `timeoutMs`. */
async function controlPlaneRunsFor(pid: number, seconds: number, timeoutMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    const children = spawnSync('ps', ['-o', 'etimes=,args=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout.split('\n');
    if (children.some((line) => / start control-plane$/.test(line) && Number(line.trim().split(/\s+/, 1)[0]) >= seconds)) return true;
  }
  return false;
}
