import type { SettleOutcome } from '../../control-plane/payments/settle.js';
import { encodeHeaderJson } from './x402-headers.js';
import { mppReceipt } from './mpp.js';

/**
 * Headers of a paid response (spec: Response to the agent): `hub-billing`, the receipt (x402's
 * `payment-response`, or MPP's `payment-receipt` once settled), `hub-usage-adjusted` when a quantity was clipped, `hub-usage-error` when the
 * settlement failed after delivery. Identity-only and released requests carry none.
 */
export function billingHeaders(outcome: SettleOutcome, protocol: 'x402' | 'mpp'): Record<string, string> {
  const headers: Record<string, string> = {};
  if (outcome.kind === 'released' || outcome.kind === 'identity') return headers;
  if (outcome.adjusted.length) headers['hub-usage-adjusted'] = JSON.stringify(outcome.adjusted);
  if (outcome.kind === 'failed') {
    headers['hub-usage-error'] = 'settlement_failed';
    return headers;
  }
  const { billing } = outcome;
  // While settling, the amounts are withheld (spec: States and transitions).
  headers['hub-billing'] = JSON.stringify(
    billing.status === 'settled'
      ? billing
      : { status: 'settling', remainderHandling: billing.remainderHandling, settleTransactionHash: billing.settleTransactionHash },
  );
  if (protocol === 'mpp') {
    if (billing.status === 'settled' && outcome.receipt.transaction) headers['payment-receipt'] = mppReceipt(outcome.receipt.transaction);
  } else if (outcome.receipt.transaction || billing.status === 'settled') {
    headers['payment-response'] = encodeHeaderJson(outcome.receipt);
  }
  return headers;
}
