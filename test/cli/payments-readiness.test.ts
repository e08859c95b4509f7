import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Provider } from '../../control-plane/db/client.js';
import { createTestDatabase, testProviders } from '../helpers/database.js';
import { startFacilitatorServer } from '../helpers/facilitator-server.js';
import { exitWithin, freePort, runHub, tempDataDir, waitForStatus } from '../helpers/processes.js';

// When hub cannot take payments it says so once at start-up and in /readyz's body; it stays ready
// (200) for what needs no payment. In production it does not start without a rail at all.

// Each case waits on processes starting far more than it computes: they run side by side.
t.jobs = 4;

const NETWORK = 'eip155:84532';

/**
 * `hub start control-plane` on `provider` with `rail`'s settings, and a proxy beside it; the
 * control-plane's /readyz once it answers, the proxy's, and the control-plane's log.
 */
async function controlPlane(t: Test, provider: Provider, rail: Record<string, string>, options: { proxy?: boolean } = {}) {
  const { dataDir } = tempDataDir(t);
  const { database } = await createTestDatabase(t, provider);
  const port = await freePort();
  const proxyPort = await freePort();
  const env = {
    HUB_DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    HUB_CONTROL_PLANE_PORT: String(port),
    HUB_PROXY_PORT: String(proxyPort),
    HUB_CHAIN_FILE: join(dataDir, 'chain.json'),
    HUB_LOG_LEVEL: 'info',
    ...rail,
  };
  const hub = runHub(t, ['start', 'control-plane'], env);
  t.ok(await waitForStatus(`http://127.0.0.1:${port}/readyz`, 200), 'ready');
  const readyz = await (await fetch(`http://127.0.0.1:${port}/readyz`)).json();
  if (options.proxy) {
    const proxy = runHub(t, ['start', 'proxy'], { ...env, HUB_LOG_LEVEL: 'warn' });
    t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/readyz`, 200), 'the proxy is ready');
    t.same(await (await fetch(`http://127.0.0.1:${proxyPort}/readyz`)).json(), readyz, 'and says the same of payments');
    proxy.child.kill('SIGTERM');
    await exitWithin(proxy, 15_000);
  }
  const said = hub
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => (JSON.parse(line) as { msg: string }).msg)
    .filter((msg) => /payment/.test(msg));
  hub.child.kill('SIGTERM');
  t.equal(await exitWithin(hub, 15_000), 0);
  return { readyz, said };
}

const facilitatorRail = (url: string) => ({
  HUB_FACILITATOR_URL: url,
  HUB_PAYMENT_NETWORK: NETWORK,
  HUB_PAYMENT_TOKEN_ADDRESS: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
});

for (const provider of testProviders()) {
  t.test(`${provider}: without a rail, /readyz is ready and says payments are unavailable`, async (t) => {
    const { readyz, said } = await controlPlane(t, provider, {}, { proxy: true });
    t.same(readyz, { status: 'ready', payments: 'unavailable', reason: 'no payment rail configured' });
    t.equal(said.length, 1, 'one line at start-up');
    t.match(said[0], /^no payment rail configured: priced challenges answer 503/);
  });
}

// What the rail answers does not depend on the database: one is enough.
{
  const provider = 'sqlite';

  t.test(`${provider}: a facilitator that does not answer is said at start-up and in /readyz`, async (t) => {
    const { readyz, said } = await controlPlane(t, provider, facilitatorRail(`http://127.0.0.1:${await freePort()}`));
    t.match(readyz, { status: 'ready', payments: 'unavailable', reason: /^the facilitator does not answer \(/ });
    t.equal(said.length, 2, 'one line at start-up for the rail, one for sandbox sellers');
    t.match(said[0], /^cannot take payments: the facilitator does not answer \(.*\); priced challenges answer 503 until it can$/);
    t.match(said[1], /^no test rail for sandbox payments: sandbox sellers’ priced challenges answer 503/);
  });

  t.test(`${provider}: a facilitator that settles on the network makes payments available`, async (t) => {
    const url = await startFacilitatorServer(t, (route) =>
      route === 'supported'
        ? { status: 200, body: { kinds: [{ x402Version: 2, scheme: 'exact', network: NETWORK }], extensions: [], signers: {} } }
        : { status: 404, body: {} },
    );
    const { readyz, said } = await controlPlane(t, provider, facilitatorRail(url));
    t.same(readyz, { status: 'ready', payments: 'available' });
    t.match(said, ['taking payments', /^no test rail for sandbox payments/]);
  });

  t.test(`${provider}: a test rail beside the live one is said too, at start-up and in /readyz`, async (t) => {
    const url = await startFacilitatorServer(t, (route) =>
      route === 'supported'
        ? { status: 200, body: { kinds: [{ x402Version: 2, scheme: 'exact', network: NETWORK }], extensions: [], signers: {} } }
        : { status: 404, body: {} },
    );
    const { readyz, said } = await controlPlane(
      t,
      provider,
      {
        ...facilitatorRail(url),
        HUB_TEST_FACILITATOR_URL: `http://127.0.0.1:${await freePort()}`,
        HUB_TEST_PAYMENT_NETWORK: 'eip155:11155111',
        HUB_TEST_PAYMENT_TOKEN_ADDRESS: '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238',
      },
      { proxy: true },
    );
    t.match(readyz, {
      status: 'ready',
      payments: 'available',
      testRail: { payments: 'unavailable', reason: /^the facilitator does not answer \(/ },
    });
    t.equal(said.length, 2, 'one line a rail');
    t.equal(said[0], 'taking payments');
    t.match(
      said[1],
      /^cannot take sandbox payments: the facilitator does not answer \(.*\); sandbox sellers’ priced challenges answer 503 until it can$/,
    );
  });
}

t.test('in production, hub does not start without a payment rail: one line', async (t) => {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const hub = runHub(t, ['start'], {
    HUB_ENV: 'production',
    HUB_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    HUB_MASTER_KEY: randomBytes(32).toString('hex'),
    HUB_SMTP_URL: 'smtp://127.0.0.1:1',
    HUB_CONTROL_PLANE_PORT: String(await freePort()),
    HUB_PROXY_PORT: String(await freePort()),
  });
  t.equal(await exitWithin(hub, 30_000), 1);
  const lines = hub.stderr().split('\n').filter(Boolean);
  t.equal(lines.length, 1, hub.stderr());
  t.match(lines[0], /no payment rail in production: set HUB_FACILITATOR_URL/);
});
