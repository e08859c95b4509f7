import { createServer } from 'node:http';
import express from 'express';
import t from 'tap';
import { closeServer } from '../../runtime/http-server.js';
import {
  type Account,
  type AccountStore,
  countPeriodUsage,
  createAccountEndpoint,
  expressRoute,
  isServiceable,
  MemoryAccountStore,
  type MintDecision,
  sendJson,
  spendCredit,
  type WriteEvent,
  type WriteReply,
} from '../../sdk/index.js';
import { newId } from '../../shared/ids.js';
import { newToken } from '../../shared/tokens.js';
import { ids, laterWrite, originalWrite } from '../helpers/account-fixtures.js';
import { kid, nowSeconds, onLoopback, type SignedRequest, secrets, send } from '../helpers/signed-request.js';

// spec: Seller account endpoint (pre-handler checks, write handling rules, write and mint replies),
// States and transitions, Account-route signature.

let store: AccountStore = new MemoryAccountStore();
let lifecycleReply: WriteReply | (() => never) = { lifecycle: 'active' };
let mintDecision: MintDecision | (() => never) = { apiKey: 'sk_live_1', maxKeys: 1 };
const events: WriteEvent[] = [];
const errors: unknown[] = [];

const endpoint = createAccountEndpoint({
  secrets,
  get store() {
    return store;
  },
  lifecycle: (_account, event) => {
    events.push(event);
    return typeof lifecycleReply === 'function' ? lifecycleReply() : lifecycleReply;
  },
  mintKey: () => (typeof mintDecision === 'function' ? mintDecision() : mintDecision),
  onError: (err) => errors.push(err),
});
const server = createServer(async (req, res) => {
  if (!(await endpoint.handle(req, res))) sendJson(res, 404, { error: 'not_found' });
});
const port = await onLoopback(server);
t.teardown(() => closeServer(server, 100));

type Body = Record<string, any>;
function deliver(body: Body, extra: Partial<SignedRequest> = {}, to = port) {
  return send(to, {
    method: 'POST',
    path: '/zeroclick/access',
    body: JSON.stringify(body),
    requestId: String(body.idempotencyKey),
    agentId: body.agent ?? body.agentId,
    purpose: 'access.write',
    headers: { 'content-type': 'application/json' },
    ...extra,
  });
}
function mint(accessId: string, body: Body, extra: Partial<SignedRequest> = {}) {
  return send(port, {
    method: 'POST',
    path: `/zeroclick/access/${accessId}/keys`,
    body: JSON.stringify(body),
    agentId: body.agent ?? body.agentId,
    purpose: 'access.mint',
    headers: { 'content-type': 'application/json' },
    ...extra,
  });
}
const account = async (accessId: string) => (await store.get(accessId))!;
const active = { status: 200, json: { lifecycle: 'active' } };

t.beforeEach(() => {
  store = new MemoryAccountStore();
  lifecycleReply = { lifecycle: 'active' };
  mintDecision = { apiKey: 'sk_live_1', maxKeys: 1 };
  events.length = 0;
  errors.length = 0;
});

t.test('401: every signature failure names its reason, on both routes, before anything is stored', async (t) => {
  const { accessId, agentId } = ids();
  const body = originalWrite({ accessId, agentId, stateVersion: 1 });
  const cases: [string, Partial<SignedRequest>, string][] = [
    ['missing', { signature: null }, 'missing_or_malformed_signature'],
    ['malformed', { signature: `t=${nowSeconds()},kid=${kid}` }, 'missing_or_malformed_signature'],
    ['stale', { timestamp: nowSeconds() - 3600 }, 'stale_timestamp'],
    ['future', { timestamp: nowSeconds() + 3600 }, 'stale_timestamp'],
    ['unknown kid', { signWith: { kid: newId('signingSecret'), secret: newToken('signingSecret') } }, 'unknown_kid'],
    ['wrong secret', { signWith: { kid, secret: newToken('signingSecret') } }, 'invalid_signature'],
    ['tampered body', { signedBody: JSON.stringify({ ...body, stateVersion: 2 }) }, 'invalid_signature'],
    ['proxied signature (no purpose line)', { purpose: undefined }, 'invalid_signature'],
    ['mint signature on the write route', { purpose: 'access.mint' }, 'invalid_signature'],
  ];
  for (const [what, extra, reason] of cases) {
    const r = await deliver(body, extra);
    t.equal(r.status, 401, what);
    t.same(r.json, { error: reason }, what);
  }
  const m = await mint(accessId, { agent: agentId }, { purpose: 'access.write' });
  t.same([m.status, m.json], [401, { error: 'invalid_signature' }], 'write signature on the mint route');
  const p = await mint(accessId, { agent: agentId }, { purpose: undefined });
  t.same([p.status, p.json], [401, { error: 'invalid_signature' }], 'proxied signature on the mint route');
  t.equal(await store.get(accessId), undefined, 'nothing stored');
  t.same(events, [], 'no hook ran');
});

t.test('400: a malformed body, or one that disagrees with the signed headers', async (t) => {
  const { accessId, agentId } = ids();
  const good = originalWrite({ accessId, agentId, stateVersion: 3 });
  const later = laterWrite({ accessId, agentId, stateVersion: 3, buyerId: newId('buyer'), buyerEmail: 'ann@example.com' });
  const laterHeaders = {
    'content-type': 'application/json',
    'hub-buyer-id': later.buyerId as string,
    'hub-buyer-email': 'ann@example.com',
  };
  const cases: [string, Body, Partial<SignedRequest>, RegExp][] = [
    ['not JSON', good, { body: '{"accessId":', signedBody: '{"accessId":' }, /not valid JSON/],
    ['an array', [] as unknown as Body, {}, /JSON object/],
    ['no agent field', { ...good, agent: undefined }, { agentId }, /exactly one of agent or agentId/],
    ['both agent and agentId', { ...good, agentId }, {}, /exactly one of agent or agentId/],
    ['a bad access id', { ...good, accessId: 'acc_1' }, {}, /^accessId: /],
    [
      'a money field without six decimals',
      { ...good, state: { ...good.state, creditGrantedUsd: '10.00' } },
      {},
      /^state\.creditGrantedUsd: .*six decimals/,
    ],
    ['a float for money', { ...good, state: { ...good.state, creditGrantedUsd: 10 } }, {}, /^state\.creditGrantedUsd: /],
    ['an unknown status', { ...good, state: { ...good.state, status: 'paused' } }, {}, /^state\.status: /],
    ['a payg plan', { ...good, plan: { ...good.plan, billingMode: 'payg' } }, {}, /^plan\.billingMode: /],
    ['a fractional stateVersion', { ...good, stateVersion: 3.5, idempotencyKey: `${accessId}:3.5` }, {}, /^stateVersion: /],
    [
      'a period start that is not a timestamp',
      { ...good, state: { ...good.state, period: { start: 'yesterday', end: null } } },
      {},
      /^state\.period\.start: /,
    ],
    ['an agent other than the signed agent id', good, { agentId: newId('agent') }, /agent does not match the signed hub-agent-id/],
    ['no agent id header at all', good, { agentId: undefined }, /agent does not match the signed hub-agent-id/],
    [
      'an idempotencyKey that is not accessId:stateVersion',
      { ...good, idempotencyKey: `${accessId}:4` },
      {},
      /idempotencyKey must be accessId:stateVersion/,
    ],
    ['a request id other than the idempotencyKey', good, { requestId: `${accessId}:2` }, /does not match the signed hub-request-id/],
    [
      'later variant: buyer id header differs',
      later,
      { headers: { ...laterHeaders, 'hub-buyer-id': newId('buyer') } },
      /buyerId does not match the hub-buyer-id header/,
    ],
    [
      'later variant: buyer id header missing',
      later,
      { headers: { 'content-type': 'application/json', 'hub-buyer-email': 'ann@example.com' } },
      /buyerId does not match/,
    ],
    [
      'later variant: buyer email header differs',
      later,
      { headers: { ...laterHeaders, 'hub-buyer-email': 'bob@example.com' } },
      /buyerEmail does not match the hub-buyer-email header/,
    ],
    ['later variant: a declared field left out', { ...later, buyerEmail: undefined }, { headers: laterHeaders }, /^buyerEmail: /],
    [
      'later variant: lifetime totals left out',
      { ...later, state: { ...later.state, lifetimeCreditReversedUsd: undefined } },
      { headers: laterHeaders },
      /^state\.lifetimeCreditReversedUsd: /,
    ],
  ];
  for (const [what, body, extra, message] of cases) {
    const r = await deliver(body, { requestId: `${accessId}:3`, ...extra });
    t.equal(r.status, 400, what);
    t.same(Object.keys(r.json ?? {}), ['error'], `${what}: the envelope is { error }`);
    t.match(r.json?.error, message, what);
  }
  t.equal(await store.get(accessId), undefined, 'nothing stored');
  const ok = await deliver(later, { headers: laterHeaders });
  t.same([ok.status, ok.json], [active.status, active.json], 'the same later-variant write with matching headers is applied');
});

t.test('writes net credit in micro-USD: credit, replay, out of order, debit clamped at zero, no credit dimension', async (t) => {
  const { accessId, agentId } = ids();
  const w = (v: number, granted: bigint | null, reversed?: bigint) =>
    deliver(originalWrite({ accessId, agentId, stateVersion: v, granted, reversed }));

  t.match(await w(1, 10_000_000n, 0n), active);
  t.match(await account(accessId), { balanceMicros: 10_000_000n, creditGrantedMicros: 10_000_000n, stateVersion: 1 });
  t.match(events.at(-1), { outcome: 'credit' });

  t.match(await w(3, 25_000_000n, 0n), active, 'v3 arrives before v2');
  t.match(await account(accessId), { balanceMicros: 25_000_000n, stateVersion: 3 });
  t.match(await w(2, 15_000_000n, 0n), active, 'v2 late: acknowledged');
  t.match(await account(accessId), { balanceMicros: 25_000_000n, stateVersion: 3 }, 'and changes nothing');
  t.match(events.at(-1), { outcome: 'replay' });
  t.match(await w(3, 25_000_000n, 0n), active, 'v3 again (hub retry)');
  t.match(await account(accessId), { balanceMicros: 25_000_000n });
  t.match(events.at(-1), { outcome: 'replay' });

  // The buyer spends most of it, then a refund pulls back more than is left.
  await store.update(accessId, (a) => ({ account: spendCredit(a!, 20_000_000n).account, result: null }));
  t.match(await w(4, 25_000_000n, 8_000_000n), active);
  t.match(await account(accessId), { balanceMicros: 0n, creditReversedMicros: 8_000_000n }, 'clamped at zero, totals stored');
  t.match(events.at(-1), { outcome: 'debit' });

  t.match(await w(5, 30_000_000n, 8_000_000n), active, 'a top-up after the clawback');
  t.match(await account(accessId), { balanceMicros: 5_000_000n });

  t.match(await w(6, null, 8_000_000n), active, 'the plan loses its credit component');
  t.match(await account(accessId), { balanceMicros: 5_000_000n, hasCredit: false, creditGrantedMicros: 30_000_000n });
  t.match(events.at(-1), { outcome: 'no_credit_dimension' });

  t.match(await w(7, 30_000_000n), active, 'an older-format write without creditReversedUsd reads it as zero');
  t.match(await account(accessId), { balanceMicros: 13_000_000n, creditReversedMicros: 0n, hasCredit: true });
});

t.test('a subscription without credit: balance untouched from the first write on', async (t) => {
  const { accessId, agentId } = ids();
  t.match(await deliver(originalWrite({ accessId, agentId, stateVersion: 1, granted: null, billingMode: 'subscription' })), active);
  t.match(await account(accessId), { balanceMicros: 0n, hasCredit: false, creditReversedMicros: 0n });
  t.match(events.at(-1), { outcome: 'no_credit_dimension' });
});

t.test('period renewal resets only the per-period counters', async (t) => {
  const { accessId, agentId } = ids();
  await deliver(originalWrite({ accessId, agentId, stateVersion: 1, granted: 10_000_000n, periodStart: '2026-01-01T00:00:00Z' }));
  await store.update(accessId, (a) => ({ account: countPeriodUsage(a!, 'calls', 42), result: null }));
  await deliver(originalWrite({ accessId, agentId, stateVersion: 2, granted: 12_000_000n, periodStart: '2026-01-01T00:00:00Z' }));
  t.same((await account(accessId)).periodUsage, { calls: 42 }, 'same period: counters kept');
  t.match(events.at(-1), { periodRenewed: false });

  await deliver(
    originalWrite({ accessId, agentId, stateVersion: 3, granted: 22_000_000n, reversed: 1_000_000n, periodStart: '2026-02-01T00:00:00Z' }),
  );
  const renewed = await account(accessId);
  t.same(renewed.periodUsage, {}, 'new period: counters reset');
  t.match(
    renewed,
    {
      creditGrantedMicros: 22_000_000n,
      creditReversedMicros: 1_000_000n,
      balanceMicros: 21_000_000n,
      period: { start: '2026-02-01T00:00:00Z' },
    },
    'totals and balance kept',
  );
  t.match(events.at(-1), { periodRenewed: true, outcome: 'credit' });
});

t.test('suspend and resume; serviceability follows status and period end', async (t) => {
  const { accessId, agentId } = ids();
  await deliver(originalWrite({ accessId, agentId, stateVersion: 1 }));
  t.ok(isServiceable(await account(accessId)));
  await deliver(originalWrite({ accessId, agentId, stateVersion: 2, status: 'suspended' }));
  const suspended = await account(accessId);
  t.match(suspended, { status: 'suspended', balanceMicros: 10_000_000n }, 'suspension deletes nothing');
  t.notOk(isServiceable(suspended));
  await deliver(originalWrite({ accessId, agentId, stateVersion: 3, status: 'active' }));
  t.ok(isServiceable(await account(accessId)), 'resumed');

  await deliver(originalWrite({ accessId, agentId, stateVersion: 4, periodEnd: '2026-03-01T00:00:00Z' }));
  const a = await account(accessId);
  t.ok(isServiceable(a, new Date('2026-02-28T23:59:59Z')), 'before the end');
  t.notOk(isServiceable(a, new Date('2026-03-01T00:00:00Z')), 'lapsed at the end, without any push');
  await deliver(originalWrite({ accessId, agentId, stateVersion: 5, periodEnd: null }));
  t.ok(isServiceable(await account(accessId), new Date('2999-01-01T00:00:00Z')), 'no end: never lapses');
});

t.test('write replies: provisioning with a capped hint, and 503 on handler failure', async (t) => {
  const { accessId, agentId } = ids();
  lifecycleReply = { lifecycle: 'provisioning', retryAfterSeconds: 90 };
  t.same((await deliver(originalWrite({ accessId, agentId, stateVersion: 1 }))).json, { lifecycle: 'provisioning', retryAfterSeconds: 90 });
  lifecycleReply = { lifecycle: 'provisioning', retryAfterSeconds: 86_400 };
  t.same(
    (await deliver(originalWrite({ accessId, agentId, stateVersion: 1 }))).json,
    { lifecycle: 'provisioning', retryAfterSeconds: 1800 },
    'the resend (a replay) is asked again; hint capped at 30 minutes',
  );
  lifecycleReply = { lifecycle: 'active' };
  t.match(await deliver(originalWrite({ accessId, agentId, stateVersion: 1 })), active, 'ready on a later resend');

  lifecycleReply = () => {
    throw new Error('disk full');
  };
  const failed = await deliver(originalWrite({ accessId, agentId, stateVersion: 2 }));
  t.same([failed.status, failed.json], [503, { error: 'service_unavailable' }]);
  t.match(errors, [{ message: 'disk full' }], 'the failure is reported to the seller');

  lifecycleReply = { lifecycle: 'later' } as unknown as WriteReply;
  t.equal(
    (await deliver(originalWrite({ accessId, agentId, stateVersion: 2 }))).status,
    503,
    'a reply off the contract is a failure, not a bad 200',
  );

  const broken: AccountStore = Object.assign(Object.create(MemoryAccountStore.prototype), new MemoryAccountStore(), {
    update: async () => {
      throw new Error('database is locked');
    },
  });
  store = broken;
  t.equal((await deliver(originalWrite({ accessId, agentId, stateVersion: 3 }))).status, 503, 'the store failing');
});

t.test('mint replies', async (t) => {
  const { accessId, agentId } = ids();
  t.same((await mint(accessId, { agent: agentId })).json, { unknown: true }, 'before any write: unknown');
  t.equal((await mint(accessId, { agent: agentId })).status, 404);
  t.equal((await mint('hubacc_nope', { agent: agentId })).status, 404, 'not even an account id');

  await deliver(originalWrite({ accessId, agentId, stateVersion: 1 }));
  mintDecision = { apiKey: 'sk_live_1', maxKeys: 1, keyExpiresAt: '2026-06-01T00:00:00.000Z' };
  const ok = await mint(accessId, { agent: agentId });
  t.equal(ok.status, 200);
  t.same(ok.json, { apiKey: 'sk_live_1', keyExpiresAt: '2026-06-01T00:00:00.000Z', maxKeys: 1 });
  t.equal(ok.headers['cache-control'], 'no-store');

  const stranger = newId('agent');
  t.same((await mint(accessId, { agent: stranger })).json, { unknown: true }, "another agent's account does not exist for it");

  lifecycleReply = { lifecycle: 'provisioning', retryAfterSeconds: 12 };
  const pending = await mint(accessId, { agent: agentId });
  t.same([pending.status, pending.json], [409, { notProvisioned: true, retryAfterSeconds: 12 }]);
  lifecycleReply = { lifecycle: 'active' };
  mintDecision = { notProvisioned: true };
  t.same((await mint(accessId, { agent: agentId })).json, { notProvisioned: true, retryAfterSeconds: 30 }, 'default retry 30 s');

  mintDecision = { conflict: { code: 'max_keys_reached' } };
  const refused = await mint(accessId, { agent: agentId });
  t.same([refused.status, refused.json], [409, { conflict: { code: 'max_keys_reached' } }]);

  mintDecision = () => {
    throw new Error('key service down');
  };
  t.same((await mint(accessId, { agent: agentId })).json, { error: 'service_unavailable' });
  mintDecision = { apiKey: '' };
  t.equal((await mint(accessId, { agent: agentId })).status, 503, 'an empty key is a handler failure');
  mintDecision = { apiKey: 'k', maxKeys: 0 };
  t.equal((await mint(accessId, { agent: agentId })).status, 503, 'maxKeys must be positive');

  const bad = await mint(accessId, { agent: agentId }, { agentId: stranger });
  t.same([bad.status, Object.keys(bad.json)], [400, ['error']], 'mint agent must match the signed agent id');
  t.match(bad.json.error, /agent does not match/);
  t.equal((await mint(accessId, { agent: agentId, agentId })).status, 400, 'both names');
  t.equal((await mint(accessId, {}, { agentId })).status, 400, 'no agent');
});

t.test('later variant: another agent of the buyer can mint, and that ties it to the buyer', async (t) => {
  const { accessId, agentId } = ids();
  const buyerId = newId('buyer');
  const buyerHeaders = { 'content-type': 'application/json', 'hub-buyer-id': buyerId, 'hub-buyer-email': 'ann@example.com' };
  t.match(
    await deliver(laterWrite({ accessId, agentId, stateVersion: 1, buyerId, buyerEmail: 'ann@example.com' }), { headers: buyerHeaders }),
    active,
  );
  t.match(await account(accessId), { buyerId, buyerEmail: 'ann@example.com', creditReversedMicros: 0n, balanceMicros: 10_000_000n });
  t.ok(await store.isLinked(agentId, buyerId), 'the signed write tied the agent to the buyer');

  const sibling = newId('agent');
  t.notOk(await store.isLinked(sibling, buyerId));
  const minted = await mint(accessId, { agentId: sibling, buyerId, buyerEmail: 'ann@example.com' }, { headers: buyerHeaders });
  t.equal(minted.status, 200, minted.text);
  t.ok(await store.isLinked(sibling, buyerId), 'the signed mint body tied the sibling to the buyer');

  const wrongBuyer = newId('buyer');
  const other = await mint(
    accessId,
    { agentId: newId('agent'), buyerId: wrongBuyer, buyerEmail: null },
    { headers: { 'content-type': 'application/json', 'hub-buyer-id': wrongBuyer } },
  );
  t.same([other.status, other.json], [404, { unknown: true }], "another buyer's agent");
  const mismatch = await mint(
    accessId,
    { agentId: sibling, buyerId, buyerEmail: 'ann@example.com' },
    { headers: { 'content-type': 'application/json', 'hub-buyer-id': newId('buyer'), 'hub-buyer-email': 'ann@example.com' } },
  );
  t.equal(mismatch.status, 400, 'mint buyer id must match its header');
});

t.test('routing: other methods get 405, other paths are left to the app, a custom path works', async (t) => {
  const r = await send(port, { method: 'GET', path: '/zeroclick/access' });
  t.same([r.status, r.json, r.headers.allow], [405, { error: 'method_not_allowed' }, 'POST']);
  t.equal((await send(port, { method: 'POST', path: '/zeroclick/accessx', body: '{}' })).status, 404);
  t.equal((await send(port, { method: 'POST', path: '/zeroclick/access/a/b/keys', body: '{}' })).status, 404);

  const custom = createAccountEndpoint({ secrets, store, path: '/hooks/hub/', mintKey: () => ({ apiKey: 'k' }) });
  t.equal(custom.path, '/hooks/hub');
  const s = createServer(async (req, res) => {
    if (!(await custom.handle(req, res))) sendJson(res, 404, {});
  });
  const p = await onLoopback(s);
  t.teardown(() => closeServer(s, 100));
  const { accessId, agentId } = ids();
  const body = originalWrite({ accessId, agentId, stateVersion: 1 });
  const ok = await send(p, {
    method: 'POST',
    path: '/hooks/hub',
    body: JSON.stringify(body),
    requestId: `${accessId}:1`,
    agentId,
    purpose: 'access.write',
  });
  t.same(ok.json, { lifecycle: 'active' });
  const a: Account | undefined = await store.get(accessId);
  t.equal(a?.agentId, agentId);
});

t.test('behind a body parser that read the body first: a clear failure, never a request left hanging', async (t) => {
  const app = express();
  app.use(express.json());
  app.use(expressRoute(endpoint.handle));
  const parsed = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => parsed.once('listening', resolve));
  t.teardown(() => closeServer(parsed, 100));
  const before = errors.length;
  const body = originalWrite({ accessId: newId('access'), agentId: newId('agent'), stateVersion: 1 });
  const res = await deliver(body, {}, (parsed.address() as { port: number }).port);
  t.equal(res.status, 503, 'temporary for hub, which retries');
  t.match(String(errors.at(before)), /read already: verify hub’s signature before any body parser/, 'and the seller is told why');
});
