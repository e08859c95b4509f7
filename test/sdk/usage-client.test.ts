import t from 'tap';
import { AllowanceUnavailableError, createUsageClient, UsageApiError } from '../../sdk/index.js';
import { newId } from '../../shared/ids.js';
import { newToken } from '../../shared/tokens.js';
import { startFakeUsageApi } from '../helpers/fake-usage-api.js';

// spec: Endpoints › Usage check, Usage report; Errors › Usage endpoints; Authentication › API key bearer.
const apiKey = newToken('apiKey');
const hub = await startFakeUsageApi(apiKey);
t.teardown(() => hub.close());
const client = createUsageClient({ baseUrl: hub.url, apiKey, timeoutMs: 500 });
const zcRequestId = newId('request');

t.test('check sends the spec body with the bearer key and reads { allowed, reason }', async (t) => {
  hub.check = () => ({ status: 200, body: { allowed: true, reason: null } });
  t.same(
    await client.check({
      zcRequestId,
      serviceSlug: 'search',
      usage: [
        { meterSlug: 'calls', quantity: 1 },
        { meterSlug: 'tokens', maxQuantity: 4000 },
      ],
    }),
    { allowed: true, reason: null },
  );
  const sent = hub.requests.at(-1)!;
  t.match(sent, {
    method: 'POST',
    path: '/v1/usage/check',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
  });
  t.same(sent.body, {
    zcRequestId,
    serviceSlug: 'search',
    usage: [
      { meterSlug: 'calls', quantity: 1 },
      { meterSlug: 'tokens', maxQuantity: 4000 },
    ],
  });

  for (const reason of ['access_not_found', 'usage_exhausted', 'plan_expired']) {
    hub.check = () => ({ status: 200, body: { allowed: false, reason } });
    t.same(await client.check({ zcRequestId, serviceSlug: 'search', usage: [{ meterSlug: 'calls', quantity: 1 }] }), {
      allowed: false,
      reason,
    });
  }
});

t.test('report returns the record, flags duplicates, and hands back 402/404/409 refusals', async (t) => {
  hub.report = (body) => ({ status: 200, body: { id: 'use_1', duplicate: body.idempotencyKey === 'seen', settledUsd: '0.010000' } });
  const request = { idempotencyKey: 'k1', zcRequestId, serviceSlug: 'search', usage: [{ meterSlug: 'calls', quantity: 3 }] };
  t.same(await client.report(request), { ok: true, id: 'use_1', duplicate: false, settledUsd: '0.010000' }, 'extra fields are kept');
  t.same(hub.requests.at(-1)!.body, request);
  t.match(await client.report({ ...request, idempotencyKey: 'seen' }), { ok: true, duplicate: true });
  for (const [status, error] of [
    [402, 'usage_exhausted'],
    [404, 'access_not_found'],
    [409, 'meter_not_priced'],
  ] as const) {
    hub.report = () => ({ status, body: { error, reason: 'because' } });
    t.same(await client.report(request), { ok: false, status, error, reason: 'because' });
  }
});

t.test('anything off the contract is a UsageApiError with the status and body; an outage is AllowanceUnavailableError', async (t) => {
  const request = { zcRequestId, serviceSlug: 's', usage: [{ meterSlug: 'calls', quantity: 1 }] };
  // Set up wrong, whatever the outage policy: a plain UsageApiError.
  const wrongKey = createUsageClient({ baseUrl: hub.url, apiKey: newToken('apiKey') });
  await t.rejects(wrongKey.check(request), { name: 'UsageApiError', status: 401, body: { error: 'invalid_token' } });
  hub.report = () => ({ status: 409, body: { nope: true } });
  await t.rejects(
    client.report({ ...request, idempotencyKey: 'x' }),
    { name: 'UsageApiError', status: 409 },
    'a refusal without the envelope',
  );
  // Unavailable (spec: Bodies the seller's API returns to the service, 503 allowance_unavailable):
  // under the default failClosed policy, an AllowanceUnavailableError, which is a UsageApiError too.
  hub.check = () => ({ status: 200, body: { allowed: 'yes' } });
  await t.rejects(
    client.check(request),
    { name: 'AllowanceUnavailableError', code: 'allowance_unavailable', status: 200 },
    'a 200 of the wrong shape',
  );
  hub.check = () => ({ status: 503, raw: '<html>bad gateway</html>' });
  await t.rejects(client.check(request), { name: 'AllowanceUnavailableError', status: 503, message: /without JSON/ });
  hub.report = () => ({ status: 500, body: { error: 'Internal server error' } });
  await t.rejects(client.report({ ...request, idempotencyKey: 'x' }), { name: 'AllowanceUnavailableError', status: 500 });
  hub.check = () => 'hang';
  await t.rejects(client.check(request), { name: 'AllowanceUnavailableError', status: 0 }, 'a timeout');
  const nowhere = createUsageClient({ baseUrl: 'http://127.0.0.1:1', apiKey });
  const err = await nowhere.check(request).catch((e: unknown) => e);
  t.ok(err instanceof AllowanceUnavailableError && err instanceof UsageApiError && err.status === 0, 'unreachable');
});

t.test('bad quantities are refused before anything is sent', async (t) => {
  const before = hub.requests.length;
  const bad = [-1, 1.5, 2_147_483_648, Number.NaN];
  for (const quantity of bad) {
    await t.rejects(client.check({ zcRequestId, serviceSlug: 's', usage: [{ meterSlug: 'calls', quantity }] }), RangeError);
    await t.rejects(
      client.report({ idempotencyKey: 'k', zcRequestId, serviceSlug: 's', usage: [{ meterSlug: 'calls', quantity }] }),
      RangeError,
    );
  }
  await t.rejects(client.check({ zcRequestId, serviceSlug: 's', usage: [{ meterSlug: 'calls', maxQuantity: -2 }] }), RangeError);
  await t.rejects(
    client.report({ idempotencyKey: 'k', zcRequestId, serviceSlug: 's', usage: [{ meterSlug: 'calls' } as never] }),
    TypeError,
  );
  await t.rejects(client.check({ zcRequestId, serviceSlug: 's', usage: [{ meterSlug: '', quantity: 1 }] }), TypeError);
  t.equal(hub.requests.length, before);
  hub.check = () => ({ status: 200, body: { allowed: true, reason: null } });
  const atTheBounds = [
    { meterSlug: 'calls', quantity: 2_147_483_647 },
    { meterSlug: 'x', quantity: 0 },
  ];
  t.match(await client.check({ zcRequestId, serviceSlug: 's', usage: atTheBounds }), { allowed: true }, 'the bounds themselves are fine');
});

t.test('a base URL with a path prefix keeps it', async (t) => {
  const prefixed = createUsageClient({ baseUrl: `${hub.url}/hub`, apiKey, timeoutMs: 500 });
  const r = await prefixed.check({ zcRequestId, serviceSlug: 's', usage: [] }).catch((e: UsageApiError) => e);
  t.equal(hub.requests.at(-1)!.path, '/hub/v1/usage/check');
  t.match(r, { name: 'UsageApiError', status: 404 });
});

t.test('outage settings that could not work are refused at once', async (t) => {
  const base = { baseUrl: hub.url, apiKey };
  t.throws(() => createUsageClient({ ...base, allowanceOutage: 'open' as never }), /allowanceOutage must be "failClosed" or "failOpen"/);
  for (const bad of [{ retryDelayMs: 0 }, { retryDelayMs: -5 }, { retryDelayMs: 100, retryMaxDelayMs: 50 }, { maxQueuedReports: 1.5 }]) {
    t.throws(() => createUsageClient({ ...base, allowanceOutage: 'failOpen', ...bad }), RangeError, JSON.stringify(bad));
  }
});
