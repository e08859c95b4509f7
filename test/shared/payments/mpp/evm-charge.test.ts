import fc from 'fast-check';
import { evm as mppxEvm } from 'mppx';
import t from 'tap';
import {
  challengeNonce,
  evmChargeRequest,
  evmSource,
  parseCredential,
  parseEvmAuthorizationPayload,
  parseEvmChargeRequest,
} from '../../../../shared/payments/mpp/index.js';
import { CHAIN_ID, issueChallenge, mppxCredential, newPayer, PAYEE, TOKEN } from '../../../helpers/mpp-fixtures.js';

t.test('the request carries the amount in token units and everything a signer needs', async (t) => {
  const request = evmChargeRequest({ priceMicros: 12_340n, chainId: CHAIN_ID, token: TOKEN, recipient: PAYEE.toLowerCase() });
  t.same(request, {
    amount: '12340',
    currency: TOKEN.address,
    recipient: PAYEE,
    methodDetails: { chainId: 31337, credentialTypes: ['authorization'], decimals: 6, authorization: { name: 'Hub USD', version: '1' } },
  });
  t.equal(
    evmChargeRequest({ priceMicros: 10_000n, chainId: 1, token: { ...TOKEN, decimals: 18 }, recipient: PAYEE }).amount,
    '10000000000000000',
    '$0.01 in an 18-decimal token',
  );
  t.equal(evmChargeRequest({ priceMicros: 0n, chainId: 1, token: TOKEN, recipient: PAYEE }).amount, '0', 'identity challenges are free');
  t.throws(() => evmChargeRequest({ priceMicros: -1n, chainId: 1, token: TOKEN, recipient: PAYEE }), RangeError);
  t.throws(() => evmChargeRequest({ priceMicros: 1n, chainId: 0, token: TOKEN, recipient: PAYEE }), RangeError);
  t.throws(() => evmChargeRequest({ priceMicros: 1n, chainId: 1, token: { ...TOKEN, name: '' }, recipient: PAYEE }), TypeError);
  t.throws(() => evmChargeRequest({ priceMicros: 1n, chainId: 1, token: TOKEN, recipient: '0x1234' }));
  t.same(parseEvmChargeRequest(request), { ok: true, value: request });
});

t.test('request parsing refuses what is not a charge hub could settle', async (t) => {
  const good = evmChargeRequest({ priceMicros: 1n, chainId: 1, token: TOKEN, recipient: PAYEE });
  const details = good.methodDetails;
  const bad: [string, unknown][] = [
    ['amount', { ...good, amount: '1.5' }],
    ['amount', { ...good, amount: (1n << 256n).toString() }],
    ['currency', { ...good, currency: '0x12' }],
    ['chainId', { ...good, methodDetails: { ...details, chainId: 1.5 } }],
    ['credentialTypes', { ...good, methodDetails: { ...details, credentialTypes: ['permit2'] } }],
    ['authorization', { ...good, methodDetails: { ...details, authorization: { name: 'x' } } }],
    ['splits', { ...good, methodDetails: { ...details, splits: [{ amount: '1', recipient: PAYEE }] } }],
  ];
  for (const [what, request] of bad) t.match(parseEvmChargeRequest(request), { ok: false, reason: 'invalid_request' }, what);
});

t.test('the mppx payload: EIP-3009 fields, nonce from the challenge, validBefore from expires', async (t) => {
  const { challenge } = issueChallenge();
  const payer = newPayer();
  const credential = parseCredential(await mppxCredential(challenge, payer.key));
  if (!credential.ok) return t.fail('unparsed');
  const payload = parseEvmAuthorizationPayload(credential.value.payload);
  if (!payload.ok) return t.fail(payload.detail);
  t.match(payload.value, { type: 'authorization', from: payer.address, to: PAYEE, value: '10000', validAfter: '0' });
  t.equal(payload.value.validBefore, String(Date.parse(challenge.expires!) / 1000));
  t.equal(payload.value.nonce, challengeNonce(challenge));
  t.equal(challengeNonce(challenge), mppxEvm.challengeHash(challenge as never), 'keccak256(id ‖ realm), as mppx computes it');
  t.equal(credential.value.source, evmSource(CHAIN_ID, payer.address.toLowerCase()));
});

t.test('payload parsing is strict and total', async (t) => {
  const { challenge } = issueChallenge();
  const credential = parseCredential(await mppxCredential(challenge, newPayer().key));
  if (!credential.ok) return t.fail('unparsed');
  const good = credential.value.payload as Record<string, unknown>;
  for (const [field, value] of [
    ['type', 'transaction'],
    ['from', 'alice'],
    ['value', '-1'],
    ['validBefore', 1],
    ['nonce', '0x12'],
    ['signature', `${good.signature as string}00`],
  ] as const) {
    t.match(parseEvmAuthorizationPayload({ ...good, [field]: value }), { ok: false, reason: 'invalid_payload' }, field);
  }
  const fields = fc.dictionary(
    fc.constantFrom('type', 'from', 'to', 'value', 'nonce', 'signature', 'amount', 'currency', 'recipient', 'methodDetails'),
    fc.jsonValue(),
  );
  fc.assert(
    fc.property(fc.oneof(fc.anything(), fields), (v) => {
      parseEvmAuthorizationPayload(v);
      parseEvmChargeRequest(v);
    }),
    { numRuns: 1000 },
  );
});
