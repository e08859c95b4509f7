import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import t from 'tap';
import { exitWithin, runHub, tempDataDir } from '../helpers/processes.js';

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

t.test('hub bootstrap refuses a missing or malformed email', async (t) => {
  const { dataDir, databaseUrl } = tempDataDir(t);
  for (const args of [['bootstrap'], ['bootstrap', '--email', 'not-an-email']]) {
    const run = runHub(t, args, { HUB_DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
    t.equal(await exitWithin(run, 20_000), 1);
    t.match(run.stderr(), /bootstrap needs --email <address>/);
  }
});
