import t from 'tap';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { inlineSignerRecovery } from '../../../control-plane/facilitator/signer-recovery.js';
import { chainReader, startTestChain, tokenBalance } from '../../helpers/chain.js';
import { localFacilitatorFor } from '../../helpers/local-facilitator.js';
import { requirementsFor, signPayment } from '../../helpers/sign-payment.js';

/** LocalFacilitator against a real anvil: what verifies, what settles, and what moves on chain. */

t.setTimeout(120_000);

const chain = await startTestChain(t);
const facilitator = localFacilitatorFor(t, chain);

const payerKey = chain.accounts[2]!.privateKey;
const payer = chain.accounts[2]!.address;
const payee = chain.accounts[3]!.address;
const now = () => BigInt(Math.floor(Date.now() / 1000));

t.test('a signed authorization verifies, settles, and moves exactly the amount', async (t) => {
  const requirements = requirementsFor(chain, payee, { amount: '12345' });
  const payment = await signPayment(chain, payerKey, requirements);
  const [payerBefore, payeeBefore] = [await tokenBalance(chain, payer), await tokenBalance(chain, payee)];

  t.same(await facilitator.verify(payment, requirements), { isValid: true, payer });
  const settled = await facilitator.settle(payment, requirements);
  t.match(settled, { status: 'settled', network: chain.network, payer, amount: '12345' });
  t.notOk('alreadySettled' in settled);
  if (settled.status !== 'settled') return;

  const receipt = await chainReader(chain).getTransactionReceipt({ hash: settled.transaction });
  t.equal(receipt.status, 'success');
  t.equal(receipt.from.toLowerCase(), chain.settler.address.toLowerCase(), 'the settler pays the gas');
  t.equal(await tokenBalance(chain, payer), payerBefore - 12_345n);
  t.equal(await tokenBalance(chain, payee), payeeBefore + 12_345n);
});

t.test('a settlement does not recover the signature its verification recovered; any other one it does', async (t) => {
  const inline = await inlineSignerRecovery();
  let recovered = 0;
  const counting = localFacilitatorFor(t, chain, {
    // A settler key of its own: two facilitators on one key would take each other's nonces.
    settlerPrivateKey: chain.accounts[4]!.privateKey,
    signerRecovery: { name: 'counting', recoverSigner: (input) => (recovered++, inline.recoverSigner(input)), close: async () => {} },
  });
  const requirements = requirementsFor(chain, payee);
  const payment = await signPayment(chain, payerKey, requirements);
  t.same(await counting.verify(payment, requirements), { isValid: true, payer });
  t.match(await counting.settle(payment, requirements), { status: 'settled' });
  t.equal(recovered, 1);

  const tampered = await signPayment(chain, payerKey, requirementsFor(chain, payee, { amount: '20000' }), { tamper: { value: '10000' } });
  t.match(await counting.verify(tampered, requirements), { isValid: false, reason: 'invalid_signature' });
  t.match(await counting.settle(tampered, requirements), { status: 'failed', reason: 'invalid_signature' });
  t.equal(recovered, 3, 'a signature that did not verify is recovered each time');

  const unverified = await signPayment(chain, payerKey, requirements);
  t.match(await counting.settle(unverified, requirements), { status: 'settled' });
  t.equal(recovered, 4);
});

t.test('a used authorization does not verify again, and settling it again answers the first settlement', async (t) => {
  const requirements = requirementsFor(chain, payee);
  const payment = await signPayment(chain, payerKey, requirements);
  const first = await facilitator.settle(payment, requirements);
  t.equal(first.status, 'settled');
  const payeeAfter = await tokenBalance(chain, payee);

  t.match(await facilitator.verify(payment, requirements), { isValid: false, reason: 'nonce_already_used', payer });
  const again = await facilitator.settle(payment, requirements);
  t.match(again, { status: 'settled', alreadySettled: true, transaction: first.status === 'settled' ? first.transaction : '' });

  // Another authorization under the same nonce, for a different amount: the chain refuses it.
  const nonce = (payment.payload as { authorization: { nonce: `0x${string}` } }).authorization.nonce;
  const cheaper = requirementsFor(chain, payee, { amount: '1' });
  const reused = await signPayment(chain, payerKey, cheaper, { authorization: { nonce } });
  t.match(await facilitator.verify(reused, cheaper), { isValid: false, reason: 'nonce_already_used' });
  t.match(await facilitator.settle(reused, cheaper), { status: 'failed', reason: 'nonce_already_used' });
  t.equal(await tokenBalance(chain, payee), payeeAfter, 'nothing moved twice');
});

t.test('refuses what does not match the requirements, before touching the chain', async (t) => {
  const requirements = requirementsFor(chain, payee);
  const stranger = privateKeyToAccount(generatePrivateKey()).address;
  const cases: [string, () => Promise<[unknown, unknown]>, string][] = [
    [
      'tampered amount',
      async () => {
        const payment = await signPayment(chain, payerKey, requirementsFor(chain, payee, { amount: '20000' }), {
          tamper: { value: '10000' },
        });
        return [payment, requirements];
      },
      'invalid_signature',
    ],
    [
      'signed for less than the price',
      async () => [await signPayment(chain, payerKey, requirements, { authorization: { value: 5_000n } }), requirements],
      'amount_mismatch',
    ],
    [
      'pays someone else',
      async () => [await signPayment(chain, payerKey, requirements, { authorization: { to: stranger } }), requirements],
      'wrong_payee',
    ],
    [
      'tampered payee',
      async () => [await signPayment(chain, payerKey, requirementsFor(chain, stranger), { tamper: { to: payee } }), requirements],
      'invalid_signature',
    ],
    [
      'expired',
      async () => [await signPayment(chain, payerKey, requirements, { authorization: { validBefore: now() - 1n } }), requirements],
      'authorization_expired',
    ],
    [
      'expires within the settlement margin',
      async () => [await signPayment(chain, payerKey, requirements, { authorization: { validBefore: now() + 3n } }), requirements],
      'authorization_expired',
    ],
    [
      'not yet valid',
      async () => [
        await signPayment(chain, payerKey, requirements, { authorization: { validAfter: now() + 3600n, validBefore: now() + 7200n } }),
        requirements,
      ],
      'authorization_not_yet_valid',
    ],
    [
      'signed under another domain version',
      async () => [await signPayment(chain, payerKey, requirements, { domain: { version: '2' } }), requirements],
      'invalid_signature',
    ],
    [
      'signed for another chain',
      async () => [await signPayment(chain, payerKey, requirements, { domain: { chainId: 1 } }), requirements],
      'invalid_signature',
    ],
    [
      'signed by someone else',
      async () => {
        const payment = await signPayment(chain, generatePrivateKey(), requirements);
        (payment.payload as { authorization: { from: string } }).authorization.from = payer;
        return [payment, requirements];
      },
      'invalid_signature',
    ],
    [
      'requirements on another network',
      async () => {
        const other = requirementsFor(chain, payee, { network: 'eip155:1' });
        return [await signPayment(chain, payerKey, other), other];
      },
      'wrong_network',
    ],
    [
      'accepted on another network than required',
      async () => {
        const payment = await signPayment(chain, payerKey, requirements);
        return [{ ...payment, accepted: { ...requirements, network: 'eip155:8453' } }, requirements];
      },
      'wrong_network',
    ],
    [
      'another token',
      async () => {
        const other = requirementsFor(chain, payee, { asset: stranger });
        return [await signPayment(chain, payerKey, other), other];
      },
      'wrong_asset',
    ],
    [
      'a contract-wallet signature',
      async () => {
        const payment = await signPayment(chain, payerKey, requirements);
        (payment.payload as { signature: string }).signature = `0x${'11'.repeat(100)}`;
        return [payment, requirements];
      },
      'invalid_signature',
    ],
    [
      'a payload that is not exact-EVM',
      async () => {
        const payment = await signPayment(chain, payerKey, requirements);
        return [{ ...payment, payload: { signature: '0x12' } }, requirements];
      },
      'invalid_payload',
    ],
    [
      'x402 version 1',
      async () => [{ ...(await signPayment(chain, payerKey, requirements)), x402Version: 1 }, requirements],
      'invalid_payload',
    ],
    ['not even an object', async () => ['garbage', requirements], 'invalid_payload'],
    [
      'the upto scheme',
      async () => {
        const upto = { ...requirements, scheme: 'upto' };
        return [{ ...(await signPayment(chain, payerKey, requirements)), accepted: upto }, upto];
      },
      'unsupported_scheme',
    ],
  ];
  const payeeBefore = await tokenBalance(chain, payee);
  for (const [name, build, reason] of cases) {
    const [payment, reqs] = await build();
    t.match(await facilitator.verify(payment, reqs), { isValid: false, reason }, `verify: ${name}`);
    const settled = await facilitator.settle(payment, reqs);
    t.match(settled, { status: 'failed', reason }, `settle: ${name}`);
    t.notOk('transaction' in settled, `settle: ${name} submits nothing`);
  }
  t.equal(await tokenBalance(chain, payee), payeeBefore, 'no refused payment moved anything');
});

t.test('a payer without the funds is refused by verify and by settle', async (t) => {
  const poorKey = generatePrivateKey();
  const requirements = requirementsFor(chain, payee);
  const payment = await signPayment(chain, poorKey, requirements);
  const poor = privateKeyToAccount(poorKey).address;
  t.same(await facilitator.verify(payment, requirements), {
    isValid: false,
    reason: 'insufficient_funds',
    message: 'The payer’s token balance is below the amount.',
    payer: poor,
  });
  t.match(await facilitator.settle(payment, requirements), { status: 'failed', reason: 'insufficient_funds', payer: poor });
});

t.test('a configured token with no contract behind it is the wrong asset', async (t) => {
  const nowhere = privateKeyToAccount(generatePrivateKey()).address;
  const misconfigured = localFacilitatorFor(t, chain, { tokens: [{ ...chain.token, address: nowhere }] });
  const requirements = requirementsFor(chain, payee, { asset: nowhere });
  const payment = await signPayment(chain, payerKey, requirements, { domain: { verifyingContract: nowhere } });
  t.match(await misconfigured.verify(payment, requirements), { isValid: false, reason: 'wrong_asset' });
});

t.test('describes what it supports and who settles', async (t) => {
  t.same(await facilitator.supported(), {
    kinds: [{ x402Version: 2, scheme: 'exact', network: chain.network }],
    extensions: [],
    signers: { 'eip155:*': [chain.settler.address] },
  });
});

t.test('many payments from one settler key settle concurrently without nonce clashes', async (t) => {
  const requirements = requirementsFor(chain, payee, { amount: '100' });
  const payers = [chain.accounts[2]!, chain.accounts[4]!, chain.accounts[5]!];
  const payments = await Promise.all(Array.from({ length: 9 }, (_, i) => signPayment(chain, payers[i % 3]!.privateKey, requirements)));
  const before = await tokenBalance(chain, payee);
  const results = await Promise.all(payments.map((p) => facilitator.settle(p, requirements)));
  t.same(
    results.map((r) => r.status),
    Array(9).fill('settled'),
  );
  t.equal(new Set(results.map((r) => (r.status === 'settled' ? r.transaction : ''))).size, 9, 'nine transactions');
  t.equal(await tokenBalance(chain, payee), before + 900n);
});

t.test('a facilitator whose RPC is down cannot verify, and settles nothing: the outcome waits for the chain', async (t) => {
  const down = localFacilitatorFor(t, chain, { rpcUrl: 'http://127.0.0.1:9', rpcTimeoutMs: 2_000 });
  const requirements = requirementsFor(chain, payee);
  const payment = await signPayment(chain, payerKey, requirements);
  await t.rejects(down.verify(payment, requirements), { name: 'FacilitatorUnavailableError', kind: 'network' });
  // Not failed: after a restart, an earlier broadcast of this payment may be on the chain it cannot read.
  t.match(await down.settle(payment, requirements), { status: 'pending', transaction: undefined, message: /.+/ });
  t.same(await facilitator.verify(payment, requirements), { isValid: true, payer }, 'the payment itself is still good');
});
