import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { unavailableDatabase } from '../../control-plane/db/unavailable.js';
import { managementClient, type Reply } from '../helpers/management.js';
import { bootstrapHub, freePort, runHub, tempDataDir, waitForStatus } from '../helpers/processes.js';

// The disk under a SQLite database fills up (issue: crashes and faults): a control-plane whose
// database sits on a small filesystem of its own (a size-limited tmpfs the test mounts, D-270).
// Writes are refused whole with 503 `service_unavailable`, never a 500; reads go on; nothing
// acknowledged is lost; the file passes SQLite's integrity check; and once space is freed,
// writes work again without a restart.

/** Mounts a tmpfs of `size` at `dir`; false where this process may not mount (not root, a container without the right). */
function mountSmallDisk(t: Tap, dir: string, size: string): boolean {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    return false;
  }
  t.teardown(() => execFileSync('umount', ['-l', dir], { stdio: 'ignore' }));
  return true;
}

type Tap = { teardown: (fn: () => unknown) => void };

/** Writes zeros into `file` until the filesystem says it is full (ENOSPC); the bytes written. */
function fillUp(file: string): number {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(16 * 1024);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return written;
}

/** Whether this process may mount a filesystem, tried on a folder of its own. */
function mayMount(): boolean {
  const probe = mkdtempSync(join(tmpdir(), 'hub-mount-probe-'));
  const mounted = mountSmallDisk({ teardown: () => {} }, probe, '1m');
  if (mounted) execFileSync('umount', [probe], { stdio: 'ignore' });
  rmSync(probe, { recursive: true, force: true });
  return mounted;
}

const skip = mayMount() ? false : 'this process may not mount a filesystem (it needs root): see docs/decisions.md#D-270';

t.test('a full disk under SQLite: writes refused clearly, reads go on, nothing lost, nothing corrupt', { skip }, async (t) => {
  const { dataDir } = tempDataDir(t);
  const disk = join(dataDir, 'small-disk');
  t.ok(mountSmallDisk(t, disk, '8m'), 'a small disk of its own');
  const databaseFile = join(disk, 'hub.db');
  const port = await freePort();
  const env = {
    DATABASE_URL: `file:${databaseFile}`,
    HUB_DATA_DIR: dataDir,
    HUB_CONTROL_PLANE_PORT: String(port),
    HUB_DEV_CHAIN: 'off',
  };
  const hubUrl = `http://127.0.0.1:${port}`;
  const hub = runHub(t, ['start', 'control-plane'], env);
  t.ok(await waitForStatus(`${hubUrl}/readyz`, 200), 'the control-plane is ready');
  const { apiKey } = await bootstrapHub(env, 'Full');
  const api = managementClient(hubUrl);
  let n = 0;
  const createSeller = () => {
    const slug = `full-${++n}`;
    return api
      .post('/v1/sellers', apiKey, { name: slug, slug, upstreamBaseUrl: 'https://api.example.com' })
      .then((reply) => ({ slug, reply }));
  };
  const acknowledged: string[] = [];
  for (let i = 0; i < 20; i++) {
    const { slug, reply } = await createSeller();
    if (reply.status === 201) acknowledged.push(slug);
  }
  t.equal(acknowledged.length, 20, 'writes work while there is room');

  const filler = join(disk, 'filler');
  fillUp(filler);
  // Writes go on until SQLite needs a page the disk no longer has: the first refused is the test.
  const refusedSlugs: string[] = [];
  let refused: Reply | undefined;
  for (let tries = 0; tries < 2_000 && !refused; tries++) {
    const { slug, reply } = await createSeller();
    if (reply.status === 201) acknowledged.push(slug);
    else {
      refused = reply;
      refusedSlugs.push(slug);
    }
  }
  t.match(
    refused,
    { status: 503, body: { error: 'service_unavailable', reason: /no room|full/i } },
    'a write on a full disk is refused with 503, saying why',
  );
  t.notMatch(JSON.stringify(refused?.body), /SQLITE|sqlite|disk I\/O|\bat \w+ \(/, 'and no internals');
  t.ok(refused?.headers.get('retry-after'), 'with when to try again');
  const again = await createSeller();
  refusedSlugs.push(again.slug);
  t.equal(again.reply.status, 503, 'and the next one too, while the disk stays full');

  const listed = await api.get('/v1/sellers', apiKey);
  t.equal(listed.status, 200, 'reads go on');
  const slugs = (listed.body.sellers as { slug: string }[]).map((s) => s.slug);
  t.same(
    acknowledged.filter((slug) => !slugs.includes(slug)),
    [],
    `every acknowledged write is there (${acknowledged.length})`,
  );
  t.same(
    refusedSlugs.filter((slug) => slugs.includes(slug)),
    [],
    'a refused write left nothing behind',
  );
  t.equal((await api.get('/readyz')).status, 200, 'the process is up');

  rmSync(filler);
  const afterwards = await createSeller();
  t.equal(afterwards.reply.status, 201, 'space freed: writes work again, without a restart');
  hub.child.kill('SIGTERM');
  t.equal(await hub.exited, 0, 'and the control-plane stops cleanly');

  const integrity = new Database(databaseFile, { readonly: true });
  t.same(integrity.pragma('integrity_check'), [{ integrity_check: 'ok' }], 'SQLite finds the file whole');
  const count = integrity.prepare(`SELECT count(*) AS n FROM "Seller" WHERE slug LIKE 'full-%'`).get() as { n: number };
  integrity.close();
  t.equal(count.n, acknowledged.length + 1, 'every acknowledged seller, once, and nothing refused');
});

t.test('SQLITE_FULL is the full-disk 503 whichever way the write was made', async (t) => {
  const throughOrm = {
    code: 'P2010',
    meta: { driverAdapterError: { cause: { kind: 'sqlite', extendedCode: 13, message: 'database or disk is full' } } },
  };
  const onSqlLane = Object.assign(new Error('database or disk is full'), { name: 'SqliteError', code: 'SQLITE_FULL' });
  for (const [how, err] of Object.entries({ 'through the ORM': throughOrm, 'on the SQL lane': onSqlLane })) {
    t.match(unavailableDatabase(err), { code: 'service_unavailable', reason: /no room/, extra: { retryAfterSeconds: 60 } }, how);
  }
  const refused = Object.assign(new Error('UNIQUE constraint failed'), { name: 'SqliteError', code: 'SQLITE_CONSTRAINT_UNIQUE' });
  t.equal(unavailableDatabase(refused), undefined, 'a refusal is not');
});
