import type { IssuedChallenge, ProcedureOutput } from '../../shared/contract.js';
import { newId } from '../../shared/ids.js';

/**
 * Well-formed answers of the paid call's hot-path procedures, as a control-plane gives them: what
 * the contract-output tests bend into wrong shapes, and what bench/contract-outputs.ts checks.
 */
export function sampleAnswers() {
  const payer = `0x${'ab'.repeat(20)}`;
  const paymentId = newId('paymentAttempt');
  const claimed: ProcedureOutput<'claimPaidRequest'> = {
    requestId: newId('request'),
    agentId: newId('agent'),
    buyerId: null,
    payer,
    kind: 'call',
  };
  const issued: IssuedChallenge = {
    paymentId,
    amountMicros: '10000',
    amountUsd: '0.010000',
    payTo: `0x${'12'.repeat(20)}`,
    token: { address: `0x${'34'.repeat(20)}`, decimals: 6, name: 'USD Coin', version: '2' },
    serviceSlug: 'search',
    usage: [{ meterSlug: 'calls', quantity: 1 }],
    plan: null,
    rail: 'base_usdc',
    network: 'eip155:8453',
    requirements: {
      scheme: 'exact',
      network: 'eip155:8453',
      asset: `0x${'34'.repeat(20)}`,
      amount: '10000',
      payTo: `0x${'12'.repeat(20)}`,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2', paymentId },
    },
    expiresAt: '2030-01-31T12:00:00.000Z',
  };
  const billed: ProcedureOutput<'settlePaidRequest'> = {
    kind: 'billed',
    adjusted: [{ meterSlug: 'calls', reportedQuantity: 5, settledQuantity: 1 }],
    billing: {
      status: 'settled',
      authorizedUsd: '0.010000',
      chargedUsd: '0.010000',
      remainderUsd: '0.000000',
      remainderHandling: 'credited',
      settleTransactionHash: `0x${'cd'.repeat(32)}`,
    },
    receipt: { success: true, transaction: `0x${'cd'.repeat(32)}`, network: 'eip155:8453', amount: '10000', payer },
  };
  const captured: ProcedureOutput<'captureUsage'> = { usageEventIds: [newId('usageEvent')] };
  return { payer, paymentId, claimed, issued, billed, captured };
}
