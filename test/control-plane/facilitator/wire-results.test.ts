import t from 'tap';
import type { SettleResult } from '../../../control-plane/facilitator/results.js';
import {
  fromSettleResponse,
  fromVerifyResponse,
  payerOf,
  settleFailureReasons,
  toSettleResponse,
  toVerifyResponse,
  verifyFailureReasons,
} from '../../../control-plane/facilitator/results.js';

const tx = `0x${'ab'.repeat(32)}` as const;
const network = 'eip155:31337' as const;
const fallback = { amount: '10000', payer: '0xpayer' };

t.test('x402 facilitators’ reasons map onto hub’s, unknown ones keep their text', async (t) => {
  const cases: [string, string][] = [
    ['invalid_exact_evm_signature', 'invalid_signature'],
    ['invalid_exact_evm_recipient_mismatch', 'wrong_payee'],
    ['invalid_exact_evm_payload_authorization_value_mismatch', 'amount_mismatch'],
    ['invalid_exact_evm_network_mismatch', 'wrong_network'],
    ['invalid_exact_evm_payload_authorization_valid_before', 'authorization_expired'],
    ['invalid_exact_evm_payload_authorization_valid_after', 'authorization_not_yet_valid'],
    ['invalid_exact_evm_insufficient_balance', 'insufficient_funds'],
    ['invalid_exact_evm_nonce_already_used', 'nonce_already_used'],
    ['invalid_exact_evm_token_name_mismatch', 'wrong_asset'],
    ['nonce_already_used', 'nonce_already_used'],
  ];
  for (const [wire, ours] of cases) {
    t.match(
      fromVerifyResponse({ isValid: false, invalidReason: wire, payer: '0xp' }),
      { isValid: false, reason: ours, payer: '0xp' },
      wire,
    );
  }
  t.match(fromVerifyResponse({ isValid: false, invalidReason: 'something_new', invalidMessage: 'details' }), {
    reason: 'facilitator_rejected',
    message: 'something_new: details',
  });
  t.match(
    fromVerifyResponse({ isValid: false, invalidReason: 'invalid_exact_evm_transaction_failed' }),
    { reason: 'facilitator_rejected' },
    'a settle-only reason is not a verify reason',
  );
  t.same(fromVerifyResponse({ isValid: true }, '0xfrom'), { isValid: true, payer: '0xfrom' });
});

t.test('a settle response is settled only with a transaction hash; pending stays pending', async (t) => {
  t.same(fromSettleResponse({ success: true, transaction: tx, network }, fallback), {
    status: 'settled',
    transaction: tx,
    network,
    payer: '0xpayer',
    amount: '10000',
  });
  t.match(fromSettleResponse({ success: true, transaction: '', network }, fallback), { status: 'pending', transaction: undefined });
  t.match(fromSettleResponse({ success: false, errorReason: 'settlement_pending', transaction: tx, network }, fallback), {
    status: 'pending',
    transaction: tx,
  });
  t.match(fromSettleResponse({ success: false, errorReason: 'invalid_exact_evm_transaction_failed', transaction: tx, network }, fallback), {
    status: 'failed',
    reason: 'transaction_reverted',
    transaction: tx,
  });
  t.match(fromSettleResponse({ success: false, transaction: '', network }, fallback), { status: 'failed', reason: 'facilitator_rejected' });
});

t.test('hub’s results become x402 responses and come back unchanged', async (t) => {
  const results: SettleResult[] = [
    { status: 'settled', transaction: tx, network, payer: '0xp', amount: '5' },
    { status: 'pending', transaction: tx, network, payer: '0xp', message: 'receipt timed out' },
    { status: 'failed', reason: 'insufficient_funds', message: settleFailureReasons.insufficient_funds, network, payer: '0xp' },
  ];
  for (const result of results) t.same(fromSettleResponse(toSettleResponse(result), fallback), result, result.status);
  t.match(toSettleResponse(results[1]!), { success: false, errorReason: 'settlement_pending', transaction: tx });
  t.same(toVerifyResponse({ isValid: false, reason: 'wrong_payee', message: verifyFailureReasons.wrong_payee }), {
    isValid: false,
    invalidReason: 'wrong_payee',
    invalidMessage: verifyFailureReasons.wrong_payee,
  });
  t.same(fromVerifyResponse(toVerifyResponse({ isValid: true, payer: '0xp' })), { isValid: true, payer: '0xp' });
});

t.test('the payer is read from an exact payload without trusting the rest', async (t) => {
  const accepted = { scheme: 'exact', network, asset: '0x', amount: '1', payTo: '0x', maxTimeoutSeconds: 1, extra: {} };
  t.equal(payerOf({ x402Version: 2, accepted, payload: { authorization: { from: '0xabc' } } }), '0xabc');
  t.equal(payerOf({ x402Version: 2, accepted, payload: { authorization: 5 } }), '');
});
