import t from 'tap';
import { createControlPlaneClient } from '../../proxy/control-plane-client.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { startTestControlPlane } from '../helpers/control-plane.js';

// The contract's one error path: a procedure that refuses throws an ApiError in the control-plane,
// and the proxy's client hands the same ApiError (status, code, reason, extras) to its caller.
t.test('refusals cross the contract as the ApiError the control-plane threw', async (t) => {
  const cp = await startTestControlPlane(t, 'sqlite');
  const { client, close } = createControlPlaneClient(cp.url, cp.internalToken);
  t.teardown(close);

  t.same(await client.call('ping'), { ok: true, database: true, payments: 'unavailable', reason: 'no payment rail configured' });
  t.equal(await client.call('sellerByHost', { host: 'nobody.pay.localhost' }), null, 'an answer, not a refusal');

  const refusal = async (call: Promise<unknown>) => {
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    t.type(err, ApiError);
    return err as ApiError;
  };

  const unknown = await refusal(client.call('agentRegister', { challengeId: newId('registrationChallenge'), signature: '0x00' }));
  t.same([unknown.status, unknown.toBody()], [401, { error: 'bearer_required', reason: 'unknown_challenge' }]);

  const wallet = await refusal(client.call('agentChallenge', { walletAddress: 'not-a-wallet', sellerSlug: 'acme' }));
  t.same([wallet.status, wallet.toBody()], [400, { error: 'invalid_request', reason: 'invalid_wallet' }]);

  const paid = await refusal(
    client.call('claimPaidRequest', {
      paymentId: newId('paymentAttempt'),
      sellerId: newId('seller'),
      method: 'GET',
      pathAndQuery: '/',
      bodyDigest: '0'.repeat(64),
      protocol: 'x402',
      payload: {
        x402Version: 2,
        accepted: { scheme: 'exact', network: 'eip155:31337', amount: '1', asset: '0x', payTo: '0x', maxTimeoutSeconds: 60, extra: {} },
        payload: {},
      },
    }),
  );
  t.same(
    [paid.status, paid.toBody()],
    [402, { error: 'payment_required', reason: 'settlement_failed', settlementReason: 'unknown_payment' }],
    'extras such as settlementReason come along',
  );

  const invalid = await refusal(client.call('sellerByHost', { host: '' }));
  t.equal(invalid.status, 400, 'input the contract refuses is a validation error');
  t.match(invalid.toBody(), { error: /host/ });
});

t.test('what is not a refusal is not turned into one', async (t) => {
  const cp = await startTestControlPlane(t, 'sqlite');
  const wrongToken = createControlPlaneClient(cp.url, 'not-the-internal-token');
  t.teardown(wrongToken.close);
  const denied = await wrongToken.client.call('ping').catch((e: unknown) => e);
  t.notOk(denied instanceof ApiError, 'a wrong internal token is the proxy’s own fault: a 500 to the agent');

  const { client, close } = createControlPlaneClient(cp.url, cp.internalToken);
  t.teardown(close);
  const crashed = await client
    .call('settlePaidRequest', { paymentId: newId('paymentAttempt'), upstreamStatus: 200 })
    .catch((e: unknown) => e);
  t.ok(crashed instanceof Error && !(crashed instanceof ApiError), 'an unexpected failure stays unexpected');
});
