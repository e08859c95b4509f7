import t from 'tap';
import { type Hex, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ChainWitness } from '../../../control-plane/facilitator/chain-witness.js';
import { HttpFacilitator } from '../../../control-plane/facilitator/http-facilitator.js';
import { toSettleResponse, toVerifyResponse } from '../../../control-plane/facilitator/results.js';
import type { PaymentPayload, PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { chainReader, chainWallet, startTestChain, tokenBalance } from '../../helpers/chain.js';
import { type Answer, type Route, startFacilitatorServer, startX402FacilitatorServer } from '../../helpers/facilitator-server.js';
import { localFacilitatorFor } from '../../helpers/local-facilitator.js';
import { domainOf, requirementsFor, signPayment } from '../../helpers/sign-payment.js';

/** HttpFacilitator against real facilitator servers on loopback, then against scripted faults. */

t.setTimeout(120_000);

const chain = await startTestChain(t);
const payerKey = chain.accounts[2]!.privateKey;
const payer = chain.accounts[2]!.address;
const payee = chain.accounts[3]!.address;

function client(url: string, options: Partial<ConstructorParameters<typeof HttpFacilitator>[0]> = {}) {
  const facilitator = new HttpFacilitator({ url, timeoutMs: 2_000, settleTimeoutMs: 5_000, ...options });
  t.teardown(() => facilitator.close());
  return facilitator;
}

type Body = { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements };

/** EIP-3009's cancel, which hub never calls: a payer withdrawing an authorization it signed. */
const cancelAbi = parseAbi(['function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)']);

t.test('over HTTP to x402’s own facilitator: supported, verify, settle, and balances move', async (t) => {
  const url = await startX402FacilitatorServer(t, chain);
  const facilitator = client(url);

  const supported = await facilitator.supported();
  t.match(supported.kinds, [{ x402Version: 2, scheme: 'exact', network: chain.network }]);

  const requirements = requirementsFor(chain, payee, { amount: '4321' });
  const payment = await signPayment(chain, payerKey, requirements);
  const before = await tokenBalance(chain, payee);
  t.same(await facilitator.verify(payment, requirements), { isValid: true, payer });
  const settled = await facilitator.settle(payment, requirements);
  t.match(settled, { status: 'settled', network: chain.network, payer, amount: '4321', transaction: /^0x[0-9a-f]{64}$/ });
  t.equal(await tokenBalance(chain, payee), before + 4_321n);

  const tampered = await signPayment(chain, payerKey, requirements, { authorization: { value: 1n } });
  t.match(
    await facilitator.verify(tampered, requirements),
    { isValid: false, reason: 'amount_mismatch', payer },
    'x402’s reason, in hub’s words',
  );
  t.match(await facilitator.settle(tampered, requirements), { status: 'failed', reason: 'amount_mismatch' });

  // Settled again (its first answer lost, say): x402's facilitator answers that the nonce is used.
  // Whether by this payment's own settlement or by the payer elsewhere, it cannot tell: not failed.
  t.match(await facilitator.settle(payment, requirements), { status: 'pending', unresolvable: true });
  t.equal(await tokenBalance(chain, payee), before + 4_321n, 'nothing moved again');
});

t.test('with the chain to read, what x402’s facilitator cannot tell is settled or failed as the chain shows', async (t) => {
  const url = await startX402FacilitatorServer(t, chain);
  const witnessed = client(url, { witness: new ChainWitness({ rpcUrl: chain.rpcUrl, chainId: chain.chainId }) });
  const blind = client(url, { witness: new ChainWitness({ rpcUrl: 'http://127.0.0.1:9/', chainId: chain.chainId, timeoutMs: 500 }) });
  const requirements = requirementsFor(chain, payee, { amount: '1000' });
  const now = BigInt(Math.floor(Date.now() / 1000));

  // Settled once (its answer lost, say), then again: the chain names the first settlement.
  const payment = await signPayment(chain, payerKey, requirements);
  const first = await witnessed.settle(payment, requirements);
  t.match(first, { status: 'settled', transaction: /^0x[0-9a-f]{64}$/ });
  const before = await tokenBalance(chain, payee);
  t.match(
    await witnessed.settle(payment, requirements),
    { status: 'settled', transaction: (first as { transaction: string }).transaction, alreadySettled: true, amount: '1000', payer },
    'the first settlement, found on chain',
  );
  t.match(await blind.settle(payment, requirements), { status: 'pending', unresolvable: true }, 'a chain it cannot read tells nothing');
  t.equal(await tokenBalance(chain, payee), before, 'nothing moved again');

  // Settled, and asked again once it has lapsed: x402 says "expired", the chain says paid.
  const shortLived = await signPayment(chain, payerKey, requirements, { authorization: { validBefore: now + 8n } });
  const paid = await witnessed.settle(shortLived, requirements);
  t.match(paid, { status: 'settled' });
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  t.match(
    await witnessed.settle(shortLived, requirements),
    { status: 'settled', transaction: (paid as { transaction: string }).transaction, alreadySettled: true },
    'lapsed since, but paid before it lapsed',
  );

  // The payer cancels an authorization before it is settled: used, by no transfer. Nothing moves.
  const canceled = await signPayment(chain, payerKey, requirements);
  const { nonce } = (canceled.payload as { authorization: { nonce: Hex } }).authorization;
  const account = privateKeyToAccount(payerKey);
  const cancelSignature = await account.signTypedData({
    domain: domainOf(chain),
    types: {
      CancelAuthorization: [
        { name: 'authorizer', type: 'address' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'CancelAuthorization',
    message: { authorizer: account.address, nonce },
  });
  const hash = await chainWallet(chain, payerKey).writeContract({
    address: chain.token.address,
    abi: cancelAbi,
    functionName: 'cancelAuthorization',
    args: [account.address, nonce, cancelSignature],
  });
  await chainReader(chain).waitForTransactionReceipt({ hash, pollingInterval: 25 });
  t.match(await witnessed.settle(canceled, requirements), { status: 'failed', reason: 'nonce_already_used', payer });
  t.equal(await tokenBalance(chain, payee), before + 1_000n, 'only the short-lived one moved');

  // Never settled and lapsed an hour ago: nothing can move it.
  const lapsed = await signPayment(chain, payerKey, requirements, { authorization: { validBefore: now - 3_600n } });
  t.match(await witnessed.settle(lapsed, requirements), { status: 'failed', reason: 'authorization_expired' });
  t.match(await blind.settle(lapsed, requirements), { status: 'pending', unresolvable: true }, 'unread, a lapse may hide a payment');
});

t.test('hub’s LocalFacilitator behind HTTP keeps hub’s reasons end to end', async (t) => {
  const local = localFacilitatorFor(t, chain);
  const url = await startFacilitatorServer(t, async (route, body) => {
    if (route === 'supported') return { status: 200, body: await local.supported() };
    const { paymentPayload, paymentRequirements } = body as Body;
    if (route === 'verify') return { status: 200, body: toVerifyResponse(await local.verify(paymentPayload, paymentRequirements)) };
    return { status: 200, body: toSettleResponse(await local.settle(paymentPayload, paymentRequirements)) };
  });
  const facilitator = client(url);
  const requirements = requirementsFor(chain, payee);
  const elsewhere = await signPayment(chain, payerKey, requirementsFor(chain, chain.accounts[4]!.address));
  t.match(await facilitator.verify(elsewhere, requirements), { isValid: false, reason: 'wrong_payee' });
  const payment = await signPayment(chain, payerKey, requirements);
  t.match(await facilitator.settle(payment, requirements), { status: 'settled' });
  t.match(await facilitator.settle(payment, requirements), { status: 'settled' }, 'settling again answers the first settlement');
});

t.test('faults: what throws, what is pending, what failed', async (t) => {
  const script = new Map<Route, Answer>();
  const seen: Record<string, string | string[] | undefined>[] = [];
  const url = await startFacilitatorServer(t, (route, _body, headers) => {
    seen.push(headers);
    return script.get(route) ?? { status: 404, body: 'no script', raw: true };
  });
  const facilitator = client(url, {
    timeoutMs: 300,
    settleTimeoutMs: 300,
    headers: (operation) => ({ authorization: `Bearer test-${operation}` }),
  });
  const requirements = requirementsFor(chain, payee);
  const payment = await signPayment(chain, payerKey, requirements);
  const tx = `0x${'cd'.repeat(32)}`;

  script.set('verify', { status: 500, body: 'Internal Server Error', raw: true });
  script.set('settle', { status: 500, body: 'Internal Server Error', raw: true });
  await t.rejects(facilitator.verify(payment, requirements), { name: 'FacilitatorUnavailableError', kind: 'http_status', status: 500 });
  t.match(
    await facilitator.settle(payment, requirements),
    { status: 'pending', transaction: undefined },
    'a 500 on settle may have settled',
  );
  t.equal(seen.at(-1)?.authorization, 'Bearer test-settle', 'sends the configured headers per operation');

  script.set('settle', {
    status: 500,
    body: { success: false, errorReason: 'settlement_pending', transaction: tx, network: chain.network },
  });
  t.match(await facilitator.settle(payment, requirements), { status: 'pending', transaction: tx });

  script.set('verify', { status: 200, body: '{"isValid": tru', raw: true });
  script.set('settle', { status: 200, body: '{"success": tru', raw: true });
  await t.rejects(facilitator.verify(payment, requirements), { name: 'FacilitatorUnavailableError', kind: 'malformed_response' });
  t.match(await facilitator.settle(payment, requirements), { status: 'pending' }, 'malformed JSON on settle is an unknown outcome');

  script.set('verify', { status: 200, body: { hello: 'world' } });
  await t.rejects(
    facilitator.verify(payment, requirements),
    { name: 'FacilitatorUnavailableError', kind: 'malformed_response' },
    'JSON that is not a verify response',
  );

  script.set('verify', { status: 200, body: { isValid: true }, delayMs: 1_000 });
  script.set('settle', 'hang');
  await t.rejects(facilitator.verify(payment, requirements), { name: 'FacilitatorUnavailableError', kind: 'timeout' });
  t.match(await facilitator.settle(payment, requirements), { status: 'pending', message: /timed out/ });

  script.set('verify', { status: 400, body: { isValid: false, invalidReason: 'invalid_exact_evm_signature', payer } });
  script.set('settle', { status: 401, body: 'unauthorized', raw: true });
  t.match(await facilitator.verify(payment, requirements), { isValid: false, reason: 'invalid_signature', payer });
  t.match(await facilitator.settle(payment, requirements), { status: 'failed', reason: 'facilitator_rejected', message: /401/ });

  script.set('supported', { status: 503, body: 'busy', raw: true });
  await t.rejects(facilitator.supported(), { name: 'FacilitatorUnavailableError', kind: 'http_status', status: 503 });
});

t.test('a facilitator that cannot be reached: verify throws, settle failed without sending', async (t) => {
  const facilitator = client('http://127.0.0.1:9');
  const requirements = requirementsFor(chain, payee);
  const payment = await signPayment(chain, payerKey, requirements);
  await t.rejects(facilitator.verify(payment, requirements), { name: 'FacilitatorUnavailableError', kind: 'network' });
  t.match(await facilitator.settle(payment, requirements), {
    status: 'failed',
    reason: 'facilitator_unavailable',
    message: /ECONNREFUSED/,
  });
  await t.rejects(facilitator.supported(), { name: 'FacilitatorUnavailableError', kind: 'network' });
});
