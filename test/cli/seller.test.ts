import t from 'tap';
import { exitWithin, freePort, runHub, tempDataDir, waitForStatus } from '../helpers/processes.js';

// The operator's switch for a seller's storefront, on the database a running hub uses; the
// management API reads the change at once and can never make it.

t.test('hub seller stateful-access turns sales and servicing on and off', async (t) => {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const env = { HUB_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, HUB_DEV_CHAIN: 'off' };
  const port = await freePort();
  const cp = runHub(t, ['start', 'control-plane'], { ...env, HUB_CONTROL_PLANE_PORT: String(port) });
  const api = `http://127.0.0.1:${port}`;
  t.ok(await waitForStatus(`${api}/readyz`, 200));
  const boot = runHub(t, ['bootstrap', '--email', 'ops@example.com', '--json'], env);
  t.equal(await exitWithin(boot, 30_000), 0);
  const { apiKey } = JSON.parse(boot.stdout()) as { apiKey: string };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const created = await call('POST', '/v1/sellers', {
    name: 'Weather',
    slug: 'weather',
    upstreamBaseUrl: 'http://127.0.0.1:8500',
    payToAddress: '0x1111111111111111111111111111111111111111',
    networks: ['eip155:31337'],
  });
  const sellerId = (created.body.seller as { id: string }).id;
  const flags = () => call('GET', `/v1/sellers/${sellerId}/stateful-access`);

  t.match((await flags()).body, { salesEnabled: false, servicingEnabled: false }, 'a new seller starts with both off');
  t.same((await call('GET', `/v1/sellers/${sellerId}/stateful-access?variant=later`)).body, {
    stateful: false,
    accessEndpointUrl: 'http://127.0.0.1:8500/zeroclick/access',
  });

  const on = runHub(t, ['seller', 'stateful-access', sellerId, '--sales', 'on'], env);
  t.equal(await exitWithin(on, 30_000), 0);
  t.match(on.stdout(), new RegExp(`^${sellerId} \\(Weather\\): sales on, servicing off — sqlite:`));
  t.match((await flags()).body, { salesEnabled: true, servicingEnabled: false }, 'the running hub sees it at once');
  t.match(
    (await call('GET', `/v1/sellers/${sellerId}/stateful-access?variant=later`)).body,
    { stateful: false },
    'selling is not being stateful: that is the seller’s own setting',
  );

  const both = runHub(t, ['seller', 'stateful-access', sellerId, '--sales', 'off', '--servicing', 'on'], env);
  t.equal(await exitWithin(both, 30_000), 0);
  t.match((await flags()).body, { salesEnabled: false, servicingEnabled: true });
  const show = runHub(t, ['seller', 'stateful-access', sellerId], env);
  t.equal(await exitWithin(show, 30_000), 0);
  t.match(show.stdout(), /sales off, servicing on/, 'without flags it only prints');

  const viaApi = await call('PUT', `/v1/sellers/${sellerId}/stateful-access`, { accessEndpointUrl: null, salesEnabled: true });
  t.equal(viaApi.status, 400, 'the API refuses the flags');
  t.equal((await call('GET', `/v1/sellers/${sellerId}/stateful-access?variant=second`)).status, 400, 'an unknown variant is a 400');

  for (const [args, message] of [
    [['seller', 'stateful-access', 'sel_000000000000000000000000', '--sales', 'on'], /no seller sel_000000000000000000000000/],
    [['seller', 'stateful-access', sellerId, '--sales', 'maybe'], /--sales takes on or off, not "maybe"/],
    [['seller', 'stateful-access'], /usage: hub seller stateful-access <sellerId>/],
    [['seller', 'flags', sellerId], /usage: hub seller stateful-access <sellerId>/],
  ] as const) {
    const run = runHub(t, [...args], env);
    t.equal(await exitWithin(run, 30_000), 1, args.join(' '));
    t.match(run.stderr(), message);
    t.notMatch(run.stderr(), /\n\s+at /, 'no stack trace');
  }
  cp.child.kill('SIGTERM');
  await exitWithin(cp, 10_000);
});
