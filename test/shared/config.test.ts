import { availableParallelism } from 'node:os';
import t from 'tap';
import { ConfigError, loadConfig, parseDatabaseUrl } from '../../shared/config.js';

t.test('defaults: SQLite under ./data, ports 8400/8402, pay.localhost', async (t) => {
  const c = loadConfig({});
  t.equal(c.env, 'development');
  t.equal(c.controlPlane.port, 8400);
  t.equal(c.proxy.port, 8402);
  t.equal(c.controlPlane.url, 'http://127.0.0.1:8400');
  t.same(c.database, { provider: 'sqlite', url: 'file:./data/hub.db', file: './data/hub.db' });
  t.equal(c.payDomain, 'pay.localhost');
  t.equal(c.logLevel, 'info');
  t.equal(c.masterKey, undefined);
  t.equal(c.controlPlane.internalCalls, 'direct');
  t.equal(c.proxy.workers, availableParallelism(), 'a proxy worker per core');
});

t.test('reads every setting', async (t) => {
  const key = 'ab'.repeat(32);
  const c = loadConfig({
    HUB_CONTROL_PLANE_PORT: '9000',
    HUB_PROXY_PORT: '9002',
    DATABASE_URL: 'postgresql://u@db:5432/hub',
    HUB_PAY_DOMAIN: 'Pay.Example.com',
    HUB_MASTER_KEY: key,
    HUB_LOG_LEVEL: 'debug',
    HUB_ENV: 'production',
    HUB_CONTROL_PLANE_URL: 'http://cp:9000/',
    HUB_SMTP_URL: 'smtps://hub:secret@mail.example.com:465',
    HUB_MAIL_FROM: 'Weather <billing@example.com>',
    HUB_INTERNAL_CALLS: 'adapter',
    HUB_PROXY_WORKERS: '3',
  });
  t.equal(c.controlPlane.internalCalls, 'adapter');
  t.equal(c.proxy.workers, 3);
  t.same(c.mail, { smtpUrl: 'smtps://hub:secret@mail.example.com:465', from: 'Weather <billing@example.com>' });
  t.equal(c.controlPlane.port, 9000);
  t.equal(c.proxy.port, 9002);
  t.equal(c.database.provider, 'postgresql');
  t.equal(c.payDomain, 'pay.example.com');
  t.equal(c.masterKey?.toString('hex'), key);
  t.equal(c.controlPlane.url, 'http://cp:9000');
  t.equal(loadConfig({ HUB_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') }).masterKey?.length, 32, 'base64 key');
});

t.test('bad values fail with one line naming the variable', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ HUB_PROXY_PORT: '99999' }, /^HUB_PROXY_PORT must be between 1 and 65535$/],
    [{ HUB_CONTROL_PLANE_PORT: 'eighty' }, /^HUB_CONTROL_PLANE_PORT /],
    [{ HUB_PROXY_PORT: '80.5' }, /^HUB_PROXY_PORT must be a port number \(1 to 65535, in decimal\)$/],
    [{ HUB_CONTROL_PLANE_PORT: '0x1f40' }, /^HUB_CONTROL_PLANE_PORT must be a port number/],
    [{ HUB_PROXY_PORT: '1e3' }, /^HUB_PROXY_PORT must be a port number/],
    [{ HUB_MAX_BODY_BYTES: '0x10' }, /^HUB_MAX_BODY_BYTES must be a whole number in decimal$/],
    [{ HUB_HOST: '999.1.1.1' }, /^HUB_HOST must be an IP address or a hostname/],
    [{ HUB_HOST: 'two words' }, /^HUB_HOST must be an IP address or a hostname/],
    [{ DATABASE_URL: 'mysql://x/y' }, /^DATABASE_URL must start with file: .* or postgresql:\/\//],
    [{ DATABASE_URL: 'postgresql://host' }, /^DATABASE_URL .*database name/],
    [{ DATABASE_URL: 'file:' }, /^DATABASE_URL a file: URL needs a path/],
    [{ HUB_PAY_DOMAIN: 'not a domain' }, /^HUB_PAY_DOMAIN must be a hostname/],
    [{ HUB_MASTER_KEY: 'short' }, /^HUB_MASTER_KEY must be 32 bytes/],
    [{ HUB_LOG_LEVEL: 'loud' }, /^HUB_LOG_LEVEL /],
    [{ HUB_INTERNAL_CALLS: 'fast' }, /^HUB_INTERNAL_CALLS /],
    [{ HUB_PROXY_WORKERS: '0' }, /^HUB_PROXY_WORKERS must be at least 1$/],
    [{ HUB_PROXY_WORKERS: 'all' }, /^HUB_PROXY_WORKERS must be a whole number in decimal$/],
    [{ HUB_ENV: 'production' }, /^HUB_MASTER_KEY is required in production/],
    [{ NODE_ENV: 'production' }, /^HUB_MASTER_KEY is required in production/],
    [
      { HUB_ENV: 'production', HUB_MASTER_KEY: 'ab'.repeat(32) },
      /^HUB_SMTP_URL is required in production \(smtp:\/\/ or smtps:\/\/, with credentials\)/,
    ],
    [{ HUB_SMTP_URL: 'http://mail.example.com' }, /^HUB_SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/],
  ];
  for (const [env, message] of cases) {
    const err = t.throws(() => loadConfig(env), ConfigError, JSON.stringify(env)) as unknown as Error;
    t.match(err?.message, message);
    t.notMatch(err?.message, /\n/, 'one line');
  }
});

t.test('addresses and numbers that are fine', async (t) => {
  t.equal(loadConfig({ HUB_HOST: '::' }).host, '::');
  t.equal(loadConfig({ HUB_HOST: '0.0.0.0' }).host, '0.0.0.0');
  t.equal(loadConfig({ HUB_HOST: 'localhost' }).host, 'localhost');
  t.equal(loadConfig({ HUB_PROXY_PORT: ' 8403 ' }).proxy.port, 8403, 'surrounding blanks are trimmed');
});

t.test('database URLs', async (t) => {
  t.same(parseDatabaseUrl('file:/var/lib/hub/hub.db'), {
    provider: 'sqlite',
    url: 'file:/var/lib/hub/hub.db',
    file: '/var/lib/hub/hub.db',
  });
  t.equal(parseDatabaseUrl('postgres://u@h/db').provider, 'postgresql');
});

t.test('card provider keys: all three or none, in the provider formats; organization plans', async (t) => {
  t.equal(loadConfig({}).cardPayments, undefined, 'none: card payments off');
  const keys = {
    HUB_STRIPE_SECRET_KEY: 'sk_test_abc',
    HUB_STRIPE_PUBLISHABLE_KEY: 'pk_test_abc',
    HUB_STRIPE_WEBHOOK_SECRET: 'whsec_a,whsec_b',
  };
  t.match(loadConfig(keys).cardPayments, {
    secretKey: 'sk_test_abc',
    webhookSecrets: ['whsec_a', 'whsec_b'],
    timeoutMs: 10_000,
    maxNetworkRetries: 2,
    testMode: true,
  });
  t.equal(loadConfig({ ...keys, HUB_STRIPE_SECRET_KEY: 'sk_live_abc' }).cardPayments?.testMode, false, 'live keys move money');
  t.equal(loadConfig({ ...keys, HUB_STRIPE_SECRET_KEY: 'rk_test_abc' }).cardPayments?.testMode, true, 'a restricted test key');
  t.throws(
    () => loadConfig({ HUB_STRIPE_SECRET_KEY: 'sk_test_abc' }),
    /HUB_STRIPE_PUBLISHABLE_KEY and HUB_STRIPE_WEBHOOK_SECRET must be set too/,
  );
  t.throws(() => loadConfig({ ...keys, HUB_STRIPE_SECRET_KEY: 'pk_test_abc' }), /^HUB_STRIPE_SECRET_KEY must be a Stripe secret/);
  t.equal(loadConfig({}).organizationPlans[0]?.slug, 'starter');
  const plans = loadConfig({
    HUB_ORGANIZATION_PLANS: '[{"slug":"team","name":"Team","priceUsd":"49.00","interval":"month","creditsUsd":"10"}]',
  });
  t.match(plans.organizationPlans, [{ slug: 'team', priceMicros: 49_000_000n, creditMicros: 10_000_000n, trialDays: 0 }]);
  t.throws(
    () => loadConfig({ HUB_ORGANIZATION_PLANS: '[{"slug":"team","name":"Team","priceUsd":"49.001","interval":"month"}]' }),
    /HUB_ORGANIZATION_PLANS .*whole cents/,
  );
  t.throws(() => loadConfig({ HUB_ORGANIZATION_PLANS: 'nope' }), /HUB_ORGANIZATION_PLANS must be a JSON array/);
});

t.test('a paid call is taken for stranded only once no seller may still answer it', async (t) => {
  t.equal(loadConfig({}).pending.strandedCallMs, 15 * 60_000, '15 minutes by default');
  const quick = { HUB_UPSTREAM_HEADERS_TIMEOUT_MS: '1000', HUB_UPSTREAM_BODY_TIMEOUT_MS: '1000' };
  t.equal(loadConfig({ ...quick, HUB_STRANDED_CALL_MS: '2001' }).pending.strandedCallMs, 2001);
  t.throws(
    () => loadConfig({ ...quick, HUB_STRANDED_CALL_MS: '2000' }),
    /^HUB_STRANDED_CALL_MS must be longer than a seller may take to answer \(.* = 2000 ms\)$/,
  );
  t.throws(() => loadConfig({ HUB_STRANDED_CALL_MS: '60000' }), ConfigError, 'shorter than the default upstream timeouts');
});

t.test('an idle session channel is refunded after HUB_SESSIONS_IDLE_REFUND_S, a day by default', async (t) => {
  t.equal(loadConfig({}).sessions.idleRefundMs, 86_400_000);
  t.equal(loadConfig({ HUB_SESSIONS_IDLE_REFUND_S: '2' }).sessions.idleRefundMs, 2_000);
  for (const bad of ['0', '-1', '1.5', 'a day']) {
    t.throws(() => loadConfig({ HUB_SESSIONS_IDLE_REFUND_S: bad }), /HUB_SESSIONS_IDLE_REFUND_S must be/, bad);
  }
});
