import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import t from 'tap';
import { exitWithin, runHub, tempDataDir } from '../helpers/processes.js';

// Each case waits on `hub` processes far more than it computes: they run side by side.
t.jobs = 5;

t.test('hub bootstrap --json creates an organization, an admin, a session and an all-scopes key', async (t) => {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const run = runHub(t, ['bootstrap', '--email', 'Owner@Example.com', '--org', 'Acme', '--json'], {
    HUB_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
  });
  t.equal(await exitWithin(run, 30_000), 0);
  const out = JSON.parse(run.stdout());
  t.match(out, {
    organizationId: /^org_[0-9A-Za-z]{24}$/,
    userId: /^usr_[0-9A-Za-z]{24}$/,
    sessionToken: /^hubses_/,
    apiKey: /^hub_[0-9A-Za-z]{40}$/,
    apiKeyId: /^ak_[0-9A-Za-z]{24}$/,
    email: 'owner@example.com',
    organizationName: 'Acme',
  });
  t.same(out.scopes, ['admin:read', 'admin:write', 'usage:read', 'usage:write', 'page-views:write', 'agentify:convert']);

  const db = new Database(databaseUrl.replace(/^file:/, ''), { readonly: true });
  t.teardown(() => db.close());
  const key = db.prepare('SELECT * FROM ApiKey WHERE id = ?').get(out.apiKeyId) as {
    keyHash: string;
    keyPrefix: string;
    scopesJson: string;
  };
  t.equal(key.keyHash, createHash('sha256').update(out.apiKey).digest('hex'), 'only the hash of the key is stored');
  t.equal(key.keyPrefix, out.apiKey.slice(0, 12));
  t.same(JSON.parse(key.scopesJson), out.scopes);
  const dump = JSON.stringify(db.prepare('SELECT * FROM ApiKey').all()) + JSON.stringify(db.prepare('SELECT * FROM Session').all());
  t.notOk(dump.includes(out.apiKey), 'the key itself is nowhere in the database');
  t.notOk(dump.includes(out.sessionToken), 'nor the session token');
  const membership = db
    .prepare('SELECT role FROM Membership WHERE userId = ? AND organizationId = ?')
    .get(out.userId, out.organizationId) as { role: string };
  t.equal(membership.role, 'admin');
});

t.test('hub bootstrap refuses a missing or malformed email, each with its own line', async (t) => {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const cases: [string[], RegExp][] = [
    [['bootstrap'], /bootstrap needs --email <address>/],
    [['bootstrap', '--email', 'not an email'], /--email: "not an email" is not an email address/],
  ];
  for (const [args, message] of cases) {
    const run = runHub(t, args, { HUB_DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
    t.equal(await exitWithin(run, 20_000), 1);
    t.match(run.stderr(), message);
  }
});

t.test('hub bootstrap names its database, and a second organization needs --another-org', async (t) => {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const env = { HUB_DATA_DIR: dataDir, DATABASE_URL: databaseUrl };
  const file = databaseUrl.replace(/^file:/, '');

  const first = runHub(t, ['bootstrap', '--email', 'owner@example.com', '--org', 'Acme'], env);
  t.equal(await exitWithin(first, 30_000), 0);
  t.match(
    first.stdout(),
    new RegExp(`^database +sqlite:${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`),
    'the text output starts with the database',
  );

  const second = runHub(t, ['bootstrap', '--email', 'owner@example.com', '--org', 'Other'], env);
  t.equal(await exitWithin(second, 30_000), 1, 'refused');
  t.match(second.stderr(), /sqlite:.*already has 1 organization\(s\); to add one more, pass --another-org/);

  const another = runHub(t, ['bootstrap', '--email', 'owner@example.com', '--org', 'Other', '--another-org', '--json'], env);
  t.equal(await exitWithin(another, 30_000), 0);
  t.match(JSON.parse(another.stdout()), { organizationName: 'Other', email: 'owner@example.com', database: `sqlite:${file}` });

  const db = new Database(file, { readonly: true });
  t.teardown(() => db.close());
  t.equal((db.prepare('SELECT COUNT(*) AS n FROM Organization').get() as { n: number }).n, 2, 'the refused run created nothing');
});

t.test('hub bootstrap reuses an existing user only with their own password, and never changes it', async (t) => {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const env = { HUB_DATA_DIR: dataDir, DATABASE_URL: databaseUrl };
  const first = runHub(t, ['bootstrap', '--email', 'owner@example.com', '--password', 'first password'], env);
  t.equal(await exitWithin(first, 30_000), 0);
  const db = new Database(databaseUrl.replace(/^file:/, ''), { readonly: true });
  t.teardown(() => db.close());
  const hashBefore = (db.prepare('SELECT passwordHash FROM User').get() as { passwordHash: string }).passwordHash;
  const organizations = () => (db.prepare('SELECT COUNT(*) AS n FROM Organization').get() as { n: number }).n;

  for (const args of [['--password', 'second password'], []]) {
    const refused = runHub(t, ['bootstrap', '--email', 'owner@example.com', ...args, '--another-org'], env);
    t.equal(await exitWithin(refused, 30_000), 1, `refused with ${args.join(' ') || 'no password'}`);
    t.match(
      refused.stderr(),
      /owner@example\.com already has an account: give its current password with --password \(bootstrap never changes it\)/,
    );
  }
  t.equal(organizations(), 1, 'the refused runs created nothing');

  const again = runHub(t, ['bootstrap', '--email', 'owner@example.com', '--password', 'first password', '--another-org', '--json'], env);
  t.equal(await exitWithin(again, 30_000), 0, 'their own password: another organization for the same admin');
  t.equal(JSON.parse(again.stdout()).userId, (db.prepare('SELECT id FROM User').get() as { id: string }).id);
  t.equal((db.prepare('SELECT passwordHash FROM User').get() as { passwordHash: string }).passwordHash, hashBefore, 'unchanged');
  t.equal(organizations(), 2);
});

t.test('hub --version prints the package version', async (t) => {
  const run = runHub(t, ['--version'], {});
  t.equal(await exitWithin(run, 20_000), 0);
  t.match(run.stdout(), /^hub \d+\.\d+\.\d+\n$/);
});
