import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { createSellerApp } from '../../examples/seller/app.js';
import { sellerConfigFromEnv } from '../../examples/seller/config.js';
import { closeServer } from '../../runtime/http-server.js';
import { MemoryAccountStore, parseUsageHeader } from '../../sdk/index.js';
import { newId } from '../../shared/ids.js';
import { newToken } from '../../shared/tokens.js';
import { ids, laterWrite, originalWrite } from '../helpers/account-fixtures.js';
import { startFakeUsageApi } from '../helpers/fake-usage-api.js';
import { kid, onLoopback, type SignedRequest, secret, secrets, send, signFor } from '../helpers/signed-request.js';

// The reference seller (examples/seller) against a fake of hub's usage API on loopback. Its outage
// policy against a real control-plane: test/sdk/allowance-outage.test.ts.
// spec: Bodies the seller's API returns to the service; Headers on proxied requests; Seller account endpoint.

const apiKey = newToken('apiKey');
const hub = await startFakeUsageApi(apiKey);
t.teardown(() => hub.close());
const store = new MemoryAccountStore();
const serviceSlug = 'search';
const meters = [
  { meterSlug: 'calls', quantity: 1 },
  { meterSlug: 'tokens', quantity: 250 },
];
const app = createSellerApp({ secrets, hub: { baseUrl: hub.url, apiKey, timeoutMs: 300 }, serviceSlug, meters, store });
const port = await onLoopback(app);
t.teardown(() => closeServer(app, 100));
const call = (r: SignedRequest) => send(port, r);
const allow = () => (hub.check = () => ({ status: 200, body: { allowed: true, reason: null } }));
const deny = (reason: string) => (hub.check = () => ({ status: 200, body: { allowed: false, reason } }));

t.test('metered: an unpaid probe gets the 402 payment_required body and no hub-usage', async (t) => {
  deny('access_not_found');
  const requestId = newId('request');
  const r = await call({ path: '/metered', requestId });
  t.equal(r.status, 402);
  t.same(r.json, {
    error: 'payment_required',
    serviceSlug,
    usage: [
      { meterSlug: 'calls', quantity: 1 },
      { meterSlug: 'tokens', quantity: 250 },
    ],
  });
  t.equal(r.headers['hub-usage'], undefined, 'a 4xx never carries hub-usage');
  t.same(
    hub.requests.at(-1)!.body,
    {
      zcRequestId: requestId,
      serviceSlug,
      usage: [
        { meterSlug: 'calls', quantity: 1 },
        { meterSlug: 'tokens', quantity: 250 },
      ],
    },
    'the check passes the request id through unchanged',
  );
  deny('usage_exhausted');
  t.equal((await call({ path: '/metered', agentId: newId('agent') })).status, 402, 'a business denial too');
});

t.test('metered: allowed, it serves and settles with hub-usage', async (t) => {
  allow();
  const agentId = newId('agent');
  const r = await call({ path: '/metered', agentId });
  t.equal(r.status, 200);
  t.match(r.json, { served: true, agentId });
  t.same(parseUsageHeader(r.headers['hub-usage']), {
    ok: true,
    items: [
      { serviceSlug, meterSlug: 'calls', quantity: 1 },
      { serviceSlug, meterSlug: 'tokens', quantity: 250 },
    ],
  });
  const actual = await call({ path: '/metered?actual=7', agentId });
  t.match(
    parseUsageHeader(actual.headers['hub-usage']),
    { ok: true, items: [{ meterSlug: 'calls', quantity: 7 }] },
    '?actual settles another quantity',
  );
});

t.test('metered: hub unreachable or answering garbage is 503 allowance_unavailable (fail closed)', async (t) => {
  hub.check = () => 'hang';
  const slow = await call({ path: '/metered', agentId: newId('agent') });
  t.same([slow.status, slow.json], [503, { error: 'allowance_unavailable' }]);
  hub.check = () => ({ status: 500, body: { error: 'Internal server error' } });
  t.equal((await call({ path: '/metered' })).status, 503);
});

t.test('metered/report: settles through POST /v1/usage, idempotent by request id', async (t) => {
  allow();
  const requestId = newId('request');
  const first = await call({ method: 'POST', path: '/metered/report', requestId, agentId: newId('agent') });
  t.equal(first.status, 200);
  t.equal(first.headers['hub-usage'], undefined);
  t.match(first.json.report, { ok: true, duplicate: false });
  t.same(hub.requests.at(-1)!.body, {
    idempotencyKey: requestId,
    zcRequestId: requestId,
    serviceSlug,
    usage: [
      { meterSlug: 'calls', quantity: 1 },
      { meterSlug: 'tokens', quantity: 250 },
    ],
  });
  const again = await call({ method: 'POST', path: '/metered/report', requestId });
  t.match(again.json.report, { ok: true, duplicate: true, id: first.json.report.id });
});

t.test('identity: 402 with usage [] until an agent is identified', async (t) => {
  const anonymous = await call({ path: '/identity' });
  t.same([anonymous.status, anonymous.json], [402, { error: 'payment_required', serviceSlug, usage: [] }]);
  const agentId = newId('agent');
  const buyerId = newId('buyer');
  t.same((await call({ path: '/identity', agentId, buyerId })).json, { agentId, buyerId });
});

t.test('echo: the verified identity and what arrived', async (t) => {
  const agentId = newId('agent');
  const buyerId = newId('buyer');
  const requestId = newId('request');
  const r = await call({
    method: 'PUT',
    path: '/echo/x?b=2&a=1',
    body: 'héllo',
    requestId,
    agentId,
    buyerId,
    sandbox: true,
    headers: { 'x-upstream-auth': 'Bearer seller-token', 'hub-sandbox': '1' },
  });
  t.equal(r.status, 200);
  t.match(r.json, { identity: { requestId, agentId, buyerId, sandbox: true, kid }, method: 'PUT', url: '/echo/x?b=2&a=1', body: 'héllo' });
  t.match(r.json.headers, { 'x-upstream-auth': 'Bearer seller-token', 'hub-sandbox': '1', 'hub-anonymous-id': agentId });
  t.match(r.json.bodySha256, /^[0-9a-f]{64}$/);
});

t.test('every API route refuses an unsigned or forged request before calling hub', async (t) => {
  const before = hub.requests.length;
  for (const path of ['/metered', '/identity', '/stream', '/echo', '/accounts', '/nope']) {
    const r = await call({ path, signature: null });
    t.same([r.status, r.json], [401, { error: 'invalid_zeroclick_signature' }], path);
    const forged = await call({ path, signWith: { kid, secret: newToken('signingSecret') } });
    t.equal(forged.status, 401, `${path} forged`);
  }
  t.equal((await call({ method: 'POST', path: '/metered/report', signature: null })).status, 401);
  t.equal(hub.requests.length, before, 'no usage call was made');
  t.same((await call({ path: '/nope' })).json, { error: 'not_found' }, 'a signed request to nowhere is a plain 404');
});

t.test('stream: events arrive one by one, spaced by the delay', async (t) => {
  const requestId = newId('request');
  const headers: Record<string, string> = { 'hub-request-id': requestId };
  const path = '/stream?events=4&delayMs=150';
  headers['hub-signature'] = signFor({ path }, requestId);
  const arrivals: { at: number; text: string }[] = [];
  const status = await new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (text: string) => arrivals.push({ at: Date.now(), text }));
      res.on('end', () => resolve(res.statusCode ?? 0));
      t.equal(res.headers['content-type'], 'text/event-stream');
    });
    req.on('error', reject);
    req.end();
  });
  t.equal(status, 200);
  const all = arrivals.map((a) => a.text).join('');
  t.equal(all.match(/event: tick/g)?.length, 4);
  t.match(all, /event: done/);
  t.match(all, new RegExp(`"requestId":"${requestId}"`));
  const ticks = arrivals.filter((a) => a.text.includes('event: tick'));
  t.ok(ticks.length >= 3, 'ticks came in separate chunks');
  t.ok(ticks.at(-1)!.at - ticks[0]!.at >= 300, 'spread over the delays, not sent at the end');
});

t.test('accounts: write, list, mint, suspend; the buyer id alone unlocks nothing', async (t) => {
  const { accessId, agentId } = ids();
  const buyerId = newId('buyer');
  const buyerHeaders = { 'content-type': 'application/json', 'hub-buyer-id': buyerId, 'hub-buyer-email': 'ann@example.com' };
  const write = (v: number, status: 'active' | 'suspended' = 'active') =>
    call({
      method: 'POST',
      path: '/zeroclick/access',
      body: JSON.stringify(laterWrite({ accessId, agentId, stateVersion: v, status, buyerId, buyerEmail: 'ann@example.com' })),
      requestId: `${accessId}:${v}`,
      agentId,
      purpose: 'access.write',
      headers: buyerHeaders,
    });
  const mint = (who: string, extra: Record<string, string | null> = {}) =>
    call({
      method: 'POST',
      path: `/zeroclick/access/${accessId}/keys`,
      body: JSON.stringify({ agentId: who, buyerId, buyerEmail: 'ann@example.com', ...extra }),
      agentId: who,
      purpose: 'access.mint',
      headers: buyerHeaders,
    });

  t.same((await write(1)).json, { lifecycle: 'active' });
  const listed = await call({ path: '/accounts', agentId });
  t.match(listed.json, {
    accounts: [{ accessId, plan: 'pro', status: 'active', serviceable: true, balanceUsd: '10.000000', stateVersion: 1 }],
  });

  const minted = await mint(agentId);
  t.equal(minted.status, 200);
  t.match(minted.json, { apiKey: /^sk_demo_/, maxKeys: 1, keyExpiresAt: '2099-02-01T00:00:00.000Z' });
  t.equal(minted.headers['cache-control'], 'no-store');
  t.not((await mint(agentId)).json.apiKey, minted.json.apiKey, 're-minting rotates');

  const sibling = newId('agent');
  t.same(
    (await call({ path: '/accounts', agentId: sibling, buyerId })).json,
    { accounts: [] },
    'a buyer id next to an untied agent: nothing',
  );
  t.same((await call({ path: '/accounts', buyerId })).json, { accounts: [] }, 'a buyer id without an agent id: nothing');
  t.equal((await mint(sibling)).status, 200, 'hub vouches for the sibling in a signed mint');
  t.equal((await call({ path: '/accounts', agentId: sibling, buyerId })).json.accounts.length, 1, 'now tied to the buyer');
  t.same((await call({ path: '/accounts', agentId: sibling })).json, { accounts: [] }, 'but only together with that buyer id');

  t.same((await write(2, 'suspended')).json, { lifecycle: 'active' });
  const refused = await mint(agentId);
  t.same([refused.status, refused.json], [409, { conflict: { code: 'account_suspended' } }]);
  t.match(
    (await call({ path: '/accounts', agentId })).json,
    { accounts: [{ status: 'suspended', serviceable: false, balanceUsd: '10.000000' }] },
    'suspension deletes nothing',
  );
  t.same((await write(3)).json, { lifecycle: 'active' });
  t.equal((await mint(agentId)).status, 200, 'resumed');
});

t.test('a seller that provisions slowly answers provisioning, then active', async (t) => {
  const slow = createSellerApp({ secrets, hub: { baseUrl: hub.url, apiKey }, serviceSlug, provisionAfterMs: 300 });
  const slowPort = await onLoopback(slow);
  t.teardown(() => closeServer(slow, 100));
  const { accessId, agentId } = ids();
  const body = JSON.stringify(originalWrite({ accessId, agentId, stateVersion: 1 }));
  const deliver = () =>
    send(slowPort, { method: 'POST', path: '/zeroclick/access', body, requestId: `${accessId}:1`, agentId, purpose: 'access.write' });
  t.same((await deliver()).json, { lifecycle: 'provisioning', retryAfterSeconds: 1 }, 'a wait in whole seconds, rounded up');
  const early = await send(slowPort, {
    method: 'POST',
    path: `/zeroclick/access/${accessId}/keys`,
    body: JSON.stringify({ agent: agentId }),
    agentId,
    purpose: 'access.mint',
  });
  t.same([early.status, early.json], [409, { notProvisioned: true, retryAfterSeconds: 1 }]);
  await new Promise((resolve) => setTimeout(resolve, 350));
  t.same((await deliver()).json, { lifecycle: 'active' }, 'the resend finds it ready');
});

t.test('config from the environment', async (t) => {
  const c = sellerConfigFromEnv({
    SELLER_SIGNING_SECRETS: `${kid}=${secret}`,
    HUB_API_KEY: apiKey,
    SELLER_SERVICE_SLUG: 'search',
    SELLER_METERS: 'calls=1,tokens=250',
    SELLER_PORT: '0',
  });
  t.match(c, {
    secrets: { [kid]: secret },
    hub: { baseUrl: 'http://127.0.0.1:8400', apiKey, allowanceOutage: 'failClosed' },
    serviceSlug: 'search',
    meters: meters,
    port: 0,
    host: '127.0.0.1',
    dbFile: undefined,
    sellerId: undefined,
  });
  const required = { SELLER_SIGNING_SECRETS: `${kid}=${secret}`, HUB_API_KEY: apiKey, SELLER_SERVICE_SLUG: 'search' };
  t.equal(
    sellerConfigFromEnv({ ...required, HUB_CONTROL_PLANE_PORT: '8410' }).hub.baseUrl,
    'http://127.0.0.1:8410',
    "hub's control-plane on the port hub itself reads",
  );
  t.equal(sellerConfigFromEnv({ ...required, HUB_CONTROL_PLANE_PORT: '8410', HUB_BASE_URL: hub.url }).hub.baseUrl, hub.url);
  t.throws(() => sellerConfigFromEnv({}), /SELLER_SIGNING_SECRETS is required; HUB_API_KEY is required; SELLER_SERVICE_SLUG is required/);
  const sellerId = newId('seller');
  t.match(sellerConfigFromEnv({ ...required, SELLER_ALLOWANCE_OUTAGE: 'failOpen', SELLER_ID: sellerId }), {
    hub: { allowanceOutage: 'failOpen' },
    sellerId,
  });
  t.throws(
    () => sellerConfigFromEnv({ ...required, SELLER_ALLOWANCE_OUTAGE: 'open' }),
    /SELLER_ALLOWANCE_OUTAGE must be failClosed or failOpen/,
  );
  t.throws(() => sellerConfigFromEnv({ ...required, SELLER_ID: 'acme' }), /SELLER_ID must be a seller id/);
  t.throws(() => sellerConfigFromEnv({ SELLER_SIGNING_SECRETS: 'nokid', HUB_API_KEY: 'k', SELLER_SERVICE_SLUG: 's' }), /is not name=value/);
  t.throws(
    () =>
      sellerConfigFromEnv({
        SELLER_SIGNING_SECRETS: `${kid}=${secret}`,
        HUB_API_KEY: 'k',
        SELLER_SERVICE_SLUG: 's',
        SELLER_METERS: 'calls=-1',
      }),
    /whole quantity/,
  );
});

t.test('main.ts runs the app from the environment', async (t) => {
  const main = fileURLToPath(new URL('../../examples/seller/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: {
      ...process.env,
      SELLER_SIGNING_SECRETS: `${kid}=${secret}`,
      HUB_API_KEY: apiKey,
      HUB_BASE_URL: hub.url,
      SELLER_SERVICE_SLUG: serviceSlug,
      SELLER_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const childPort = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('main.ts did not start within 20 s')), 20_000);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`main.ts exited with ${code}`)));
  });
  deny('access_not_found');
  const r = await send(childPort, { path: '/metered' });
  t.equal(r.status, 402);
  t.equal((await send(childPort, { path: '/metered', signature: null })).status, 401);
  child.kill('SIGTERM');
  const code = await new Promise((resolve) => child.once('exit', resolve));
  t.equal(code, 0, 'stops cleanly on SIGTERM');
});
