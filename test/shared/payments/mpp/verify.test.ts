import t from 'tap';
import { recoverTypedDataAddress } from 'viem';
import { checkTerms, parseExactPayment } from '../../../../control-plane/facilitator/exact-payment.js';
import {
  loadRecoverer,
  recoverAuthorizationSigner,
  type SignedAuthorization,
} from '../../../../control-plane/facilitator/signer-recovery.js';
import { transferWithAuthorizationTypes } from '../../../../control-plane/facilitator/transfer-authorization.js';
import {
  type Challenge,
  type Credential,
  type EvmChargeFailure,
  evmChargeFailureReasons,
  parseCredential,
  signChallenge,
  toExactPayment,
  verifyEvmCharge,
} from '../../../../shared/payments/mpp/index.js';
import type { PaymentPayload, PaymentRequirements } from '../../../../shared/payments/x402-wire.js';
import { CHAIN_ID, issueChallenge, mppxCredential, newPayer, PAYEE, REALM, SECRET, TOKEN } from '../../../helpers/mpp-fixtures.js';

const payer = newPayer();

async function paid(challenge: Challenge): Promise<Credential> {
  const parsed = parseCredential(await mppxCredential(challenge, payer.key));
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.value;
}

t.test('an mppx credential verifies, and its signature recovers to the payer', async (t) => {
  const { challenge, paymentId } = issueChallenge({ priceMicros: 25_000n });
  const verified = verifyEvmCharge(await paid(challenge), { secret: SECRET, realm: REALM });
  if (!verified.ok) return t.fail(verified.detail);
  const v = verified.value;
  t.equal(v.paymentId, paymentId, 'the payment attempt id comes back through opaque');
  t.equal(v.payer, payer.address);
  t.same(v.signed.domain, { name: TOKEN.name, version: TOKEN.version, chainId: CHAIN_ID, verifyingContract: TOKEN.address });
  t.match(v.signed.authorization, { from: payer.address, to: PAYEE, value: 25_000n, validAfter: 0n });

  // The shape is control-plane/settlement's: both recovery backends name the payer.
  const signed: SignedAuthorization = v.signed;
  for (const choice of ['native', 'viem'] as const) {
    const recovered = await recoverAuthorizationSigner(signed, await loadRecoverer(choice));
    t.equal(recovered?.toLowerCase(), payer.address.toLowerCase(), choice);
  }
  const byViem = await recoverTypedDataAddress({
    domain: v.signed.domain,
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: v.signed.authorization,
    signature: v.signed.signature,
  });
  t.equal(byViem, payer.address, 'and viem agrees, from the EIP-712 typed data itself');
});

t.test('as an x402 exact payment, the facilitator’s own checks accept it', async (t) => {
  const { challenge } = issueChallenge();
  const verified = verifyEvmCharge(await paid(challenge), { secret: SECRET });
  if (!verified.ok) return t.fail(verified.detail);
  const { paymentPayload, paymentRequirements } = toExactPayment(verified.value);
  // Compile-time: the shapes fit the facilitator's wire types.
  const payload: PaymentPayload = paymentPayload;
  const requirements: PaymentRequirements = paymentRequirements;
  t.match(requirements, {
    scheme: 'exact',
    network: 'eip155:31337',
    asset: TOKEN.address,
    amount: '10000',
    payTo: PAYEE,
    extra: { name: 'Hub USD', version: '1' },
  });
  t.ok(requirements.maxTimeoutSeconds > 0 && requirements.maxTimeoutSeconds <= 300);
  const exact = parseExactPayment(payload, requirements);
  if (!('payment' in exact)) return t.fail(exact.failure.message);
  t.same(exact.payment.authorization, verified.value.signed.authorization);
  t.match(checkTerms(exact.payment, { network: 'eip155:31337', tokens: [TOKEN as never] }), { token: { name: 'Hub USD' } });
});

t.test('each check refuses with its own reason', async (t) => {
  const { challenge } = issueChallenge();
  const good = await paid(challenge);
  const now = Date.now();
  const nowSeconds = Math.floor(now / 1000);
  const payload = good.payload as Record<string, string>;
  const withPayload = (change: Record<string, string>): Credential => ({ ...good, payload: { ...payload, ...change } });
  const reissued = (fields: Partial<Challenge>) => {
    const { id: _id, ...rest } = challenge;
    return signChallenge({ ...rest, ...fields }, SECRET);
  };

  const cases: [EvmChargeFailure, Credential, { realm?: string; nowMs?: number }?][] = [
    ['unknown_challenge', { ...good, challenge: { ...challenge, request: { ...challenge.request, amount: '1' } } }],
    ['unknown_challenge', { ...good, challenge: { ...challenge, opaque: 'eyJwYXltZW50SWQiOiJhcGF5X3gifQ' } }],
    ['wrong_realm', good, { realm: 'other.pay.localhost' }],
    ['challenge_expired', good, { nowMs: Date.parse(challenge.expires!) }],
    ['unsupported_method', { ...good, challenge: reissued({ method: 'tempo' }) }],
    ['missing_payment_id', { ...good, challenge: reissued({ opaque: undefined }) }],
    ['invalid_request', { ...good, challenge: reissued({ request: { amount: '1' } }) }],
    ['invalid_payload', { ...good, payload: 'signed, honestly' }],
    ['challenge_mismatch', withPayload({ nonce: `0x${'11'.repeat(32)}` })],
    ['wrong_payee', withPayload({ to: payer.address })],
    ['amount_mismatch', withPayload({ value: '9999' })],
    ['authorization_not_yet_valid', withPayload({ validAfter: String(nowSeconds + 60) })],
    ['authorization_expired', withPayload({ validBefore: String(nowSeconds) })],
    ['source_mismatch', { ...good, source: `did:pkh:eip155:${CHAIN_ID}:${PAYEE}` }],
    ['source_mismatch', { ...good, source: `did:pkh:eip155:1:${payer.address}` }],
  ];
  for (const [reason, credential, options] of cases) {
    t.match(verifyEvmCharge(credential, { secret: SECRET, nowMs: now, ...options }), { ok: false, reason, detail: String }, reason);
  }
  t.match(verifyEvmCharge(good, { secret: 'wrong' }), { ok: false, reason: 'unknown_challenge' });
  t.ok(
    verifyEvmCharge({ ...good, source: `did:pkh:eip155:${CHAIN_ID}:${payer.address.toLowerCase()}` }, { secret: SECRET }).ok,
    'source address case does not matter',
  );
  t.ok(verifyEvmCharge({ challenge: good.challenge, payload: good.payload }, { secret: SECRET }).ok, 'source is optional');
  t.same(Object.keys(evmChargeFailureReasons).sort(), [...new Set(cases.map(([r]) => r))].sort(), 'every reason is exercised');
});
