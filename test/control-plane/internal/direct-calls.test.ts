import t from 'tap';
import { request } from 'undici';
import { newId } from '../../../shared/ids.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';

// The proxy's per-request calls are answered straight from node:http (control-plane/internal/
// direct-calls.ts) in tRPC's wire format: every answer, success or refusal, must be the one tRPC
// gives. The same call with one more query parameter goes through tRPC itself, so its answers
// are the reference.
t.test('a direct call answers exactly as tRPC does', async (t) => {
  const cp = await startTestControlPlane(t, 'sqlite');
  const post = async (path: string, body: string, token = cp.internalToken, query = '?batch=1') => {
    const res = await request(`${cp.url}/trpc/${path}${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body,
    });
    return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as unknown[] };
  };
  const compare = async (t: Tap, name: string, input: unknown, expectedStatus: number) => {
    const direct = await post(`internal.${name}`, JSON.stringify({ 0: input }));
    const viaTrpc = await post(`internal.${name}`, JSON.stringify({ 0: input }), cp.internalToken, '?batch=1&through=trpc');
    t.equal(direct.status, expectedStatus);
    t.equal(viaTrpc.status, expectedStatus, 'tRPC answers with the same status');
    t.same(direct.body, viaTrpc.body);
    t.equal(direct.headers['content-type'], viaTrpc.headers['content-type']);
    t.equal(direct.headers.vary, viaTrpc.headers.vary);
    return direct.body[0] as Record<string, unknown>;
  };
  type Tap = typeof t;

  await t.test('a result', async (t) => {
    const answer = await compare(
      t,
      'captureUsage',
      { requestId: newId('request'), sellerId: newId('seller'), organizationId: newId('organization'), usage: [] },
      200,
    );
    t.same(answer, { result: { data: { usageEventIds: [] } } });
  });
  await t.test('a refusal, with its envelope', async (t) => {
    const usage = [{ serviceSlug: 'search', meterSlug: 'calls', quantity: 1 }];
    const answer = await compare(
      t,
      'captureUsage',
      { requestId: newId('request'), sellerId: newId('seller'), organizationId: newId('organization'), usage },
      404,
    );
    t.match(answer, { error: { data: { envelope: { error: 'service_not_found' }, httpStatus: 404 } } });
  });
  await t.test('input the contract refuses', async (t) => {
    const answer = await compare(t, 'settlePaidRequest', { paymentId: 'nope', upstreamStatus: 200 }, 400);
    t.match(answer, { error: { data: { envelope: { error: /paymentId/ } } } });
  });
  await t.test('no input at all', async (t) => {
    await compare(t, 'settlePaidRequest', undefined, 400);
  });
  await t.test('an unexpected failure, without its message', async (t) => {
    const answer = await compare(t, 'settlePaidRequest', { paymentId: newId('paymentAttempt'), upstreamStatus: 200 }, 500);
    t.match(answer, { error: { message: 'Internal server error', data: { httpStatus: 500 } } });
  });
  await t.test('a wrong token is refused before tRPC, in the envelope', async (t) => {
    const refused = await post('internal.settlePaidRequest', JSON.stringify({ 0: {} }), 'wrong');
    t.equal(refused.status, 401);
    t.match(refused.body, { error: 'invalid_token' });
  });
});

t.test("HUB_INTERNAL_CALLS=adapter: tRPC's node adapter answers the proxy's calls, with the same answers", async (t) => {
  const [direct, adapter] = await Promise.all([
    startTestControlPlane(t, 'sqlite'),
    startTestControlPlane(t, 'sqlite', { HUB_INTERNAL_CALLS: 'adapter' }),
  ]);
  const post = async (cp: typeof direct, path: string, input: unknown) => {
    const res = await request(`${cp.url}/trpc/internal.${path}?batch=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${cp.internalToken}` },
      body: JSON.stringify({ 0: input }),
    });
    return { status: res.statusCode, contentType: res.headers['content-type'], body: await res.body.json() };
  };
  const calls: [string, unknown][] = [
    ['captureUsage', { requestId: newId('request'), sellerId: newId('seller'), organizationId: newId('organization'), usage: [] }],
    ['settlePaidRequest', { paymentId: 'nope', upstreamStatus: 200 }],
    ['settlePaidRequest', { paymentId: newId('paymentAttempt'), upstreamStatus: 200 }],
  ];
  for (const [path, input] of calls) {
    t.same(await post(adapter, path, input), await post(direct, path, input), `${path} ${JSON.stringify(input)}`);
  }
});

t.test('/trpc bounds what one request costs', async (t) => {
  const cp = await startTestControlPlane(t, 'sqlite');
  const post = async (path: string, body: string, token?: string) => {
    const res = await request(`${cp.url}/trpc/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body,
    });
    await res.body.dump();
    return res.statusCode;
  };
  const none = { created: [], completed: [] };
  t.equal(await post('internal.recordRequests?batch=1', JSON.stringify({ 0: none }), cp.internalToken), 200, 'one call');
  t.equal(
    await post('internal.recordRequests,internal.recordRequests?batch=1', JSON.stringify({ 0: none, 1: none }), cp.internalToken),
    400,
    'a batch of calls is refused: one call per request',
  );
  // 2 MB: past the management API's limit, within what the proxy's record batches may reach.
  const record = { id: `hubreq_${'a'.repeat(24)}`, sellerId: 's', method: 'GET', path: `/${'p'.repeat(2_000)}` };
  const big = JSON.stringify({ 0: { created: Array.from({ length: 1_001 }, () => record), completed: [] } });
  t.ok(big.length > 2_000_000);
  t.equal(await post('internal.recordRequests?batch=1', big), 401, 'without the internal token: refused before the body is read');
  t.equal(await post('internal.recordRequests?batch=1', big, cp.internalToken), 400, 'read whole with it (and refused: 1,001 records)');
});
