import t from 'tap';
import { request } from 'undici';
import { newId } from '../../../shared/ids.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';

// The proxy's per-request calls are answered straight from node:http (control-plane/internal/
// direct-calls.ts) in tRPC's wire format: every answer, success or refusal, must be the one tRPC
// gives. A batch of two goes through tRPC itself, so its answers are the reference.
t.test('a direct call answers exactly as tRPC does', async (t) => {
  const cp = await startTestControlPlane(t, 'sqlite');
  const post = async (path: string, body: string, token = cp.internalToken) => {
    const res = await request(`${cp.url}/trpc/${path}?batch=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body,
    });
    return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as unknown[] };
  };
  const compare = async (t: Tap, name: string, input: unknown, expectedStatus: number) => {
    const direct = await post(`internal.${name}`, JSON.stringify({ 0: input }));
    const viaTrpc = await post(`internal.${name},internal.${name}`, JSON.stringify({ 0: input, 1: input }));
    t.equal(direct.status, expectedStatus);
    t.equal(viaTrpc.status, expectedStatus, 'tRPC answers the batch of two with the same status');
    t.same(direct.body, [viaTrpc.body[0]]);
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
  await t.test('a wrong token is tRPC’s to refuse', async (t) => {
    const refused = await post('internal.settlePaidRequest', JSON.stringify({ 0: {} }), 'wrong');
    t.equal(refused.status, 401);
  });
});
