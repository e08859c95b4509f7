import Database from 'better-sqlite3';
import t from 'tap';
import { managementClient, type Reply } from '../helpers/management.js';
import { bootstrapHub, freePort, runHub, tempDataDir, waitForStatus } from '../helpers/processes.js';

// A control-plane killed (SIGKILL) in the middle of writes, on SQLite, the embedded default: the
// restarted one finds every write it acknowledged, none twice and none half made, and a database
// that passes SQLite's own integrity check. Loopback only; the load stops by itself.

t.test('a control-plane killed mid-writes loses nothing it acknowledged and leaves no half-made write', async (t) => {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const port = await freePort();
  const env = { DATABASE_URL: databaseUrl, HUB_DATA_DIR: dataDir, HUB_CONTROL_PLANE_PORT: String(port), HUB_DEV_CHAIN: 'off' };
  const hubUrl = `http://127.0.0.1:${port}`;
  const start = async () => {
    const process = runHub(t, ['start', 'control-plane'], env);
    t.ok(await waitForStatus(`${hubUrl}/readyz`, 200), 'the control-plane is ready');
    return process;
  };
  const first = await start();
  const { apiKey } = await bootstrapHub(env, 'Crash');
  const api = managementClient(hubUrl);

  // Eight writers create sellers until the process is gone; each write's answer is kept.
  const answers = new Map<string, Reply | 'lost'>();
  let acknowledged = 0;
  let n = 0;
  const writer = async () => {
    for (let tries = 0; tries < 500; tries++) {
      const slug = `crash-${++n}`;
      const answer = await api
        .post('/v1/sellers', apiKey, { name: slug, slug, upstreamBaseUrl: 'https://api.example.com' })
        .catch(() => 'lost' as const);
      answers.set(slug, answer);
      if (answer === 'lost') return;
      if (answer.status === 201) acknowledged++;
    }
  };
  const writers = Array.from({ length: 8 }, writer);
  for (const deadline = Date.now() + 30_000; acknowledged < 40 && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  first.child.kill('SIGKILL');
  await Promise.all(writers);
  await first.exited;

  const integrity = new Database(databaseUrl.slice('file:'.length), { readonly: true });
  t.same(integrity.pragma('integrity_check'), [{ integrity_check: 'ok' }], 'SQLite finds the file whole');
  integrity.close();

  await start();
  const sellers = ((await api.get('/v1/sellers', apiKey)).body.sellers as { slug: string }[]).map((s) => s.slug);
  t.equal(new Set(sellers).size, sellers.length, 'none twice');
  const acked = [...answers].filter(([, a]) => a !== 'lost' && a.status === 201).map(([slug]) => slug);
  t.ok(acked.length >= 40, `${acked.length} acknowledged`);
  t.same(
    acked.filter((slug) => !sellers.includes(slug)),
    [],
    'every acknowledged write is there',
  );
  t.ok(
    [...answers].every(([, a]) => a === 'lost' || a.status === 201 || a.status === 503),
    'a write was made (201), refused whole (503) or lost with the process: never a 500',
  );
  // What was not acknowledged is either there whole or not at all: made again, it is made once.
  const lost = [...answers].filter(([, a]) => a === 'lost' || a.status !== 201).map(([slug]) => slug);
  for (const slug of lost) {
    const again = await api.post('/v1/sellers', apiKey, { name: slug, slug, upstreamBaseUrl: 'https://api.example.com' });
    t.ok(
      again.status === 201 || (again.status === 409 && again.body.error === 'duplicate_slug' && sellers.includes(slug)),
      `${slug}: made once (${again.status})`,
    );
  }
});
