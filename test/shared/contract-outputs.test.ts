import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { PaymentRail } from '../../control-plane/payments/rail.js';
import { createControlPlaneClient } from '../../proxy/control-plane-client.js';
import {
  HOT_PATH_PROCEDURES,
  type IssuedChallenge,
  type ProcedureInput,
  type ProcedureName,
  type ProcedureOutput,
} from '../../shared/contract.js';
import { checkOutput, contractOutputsChecked } from '../../shared/contract-outputs.js';
import { newId } from '../../shared/ids.js';
import type { PaymentPayload } from '../../shared/payments/x402-wire.js';
import { seedPricedService } from '../helpers/catalog-seed.js';
import { sampleAnswers } from '../helpers/contract-answers.js';
import { startTestControlPlane } from '../helpers/control-plane.js';
import { testProviders } from '../helpers/database.js';

// Every internal answer has an output schema in the contract (shared/contract.ts); in tests both
// ends check each answer against it (shared/contract-outputs.ts, docs/decisions.md#D-207). Here:
// when the check is on, what it refuses, that a refusal cannot be swallowed, and that the real
// answers of the hot path's procedures, from a running control-plane, pass it.

t.test('tests check answers; production never does', async (t) => {
  t.ok(contractOutputsChecked(), 'on in this test process (tap sets HUB_CHECK_CONTRACT_OUTPUTS=1)');
  t.notOk(contractOutputsChecked({}), 'off by default');
  t.ok(contractOutputsChecked({ HUB_CHECK_CONTRACT_OUTPUTS: '1' }), 'on with the switch');
  t.ok(contractOutputsChecked({ HUB_ENV: 'test' }), 'on in test mode (HUB_ENV)');
  t.ok(contractOutputsChecked({ NODE_ENV: 'test' }), 'on in test mode (NODE_ENV)');
  t.notOk(contractOutputsChecked({ HUB_CHECK_CONTRACT_OUTPUTS: 'yes' }), 'only the value 1 turns it on');
  t.notOk(contractOutputsChecked({ HUB_CHECK_CONTRACT_OUTPUTS: '1', NODE_ENV: 'production' }), 'production ignores the switch');
  t.notOk(contractOutputsChecked({ HUB_CHECK_CONTRACT_OUTPUTS: '1', HUB_ENV: 'production' }), 'HUB_ENV=production too');
});

const { paymentId, claimed, issued, billed } = sampleAnswers();

t.test('answers outside the contract are refused', async (t) => {
  const good: [ProcedureName, unknown][] = [
    ['issuePaymentChallenge', { kind: 'challenge', challenge: issued }],
    ['issuePaymentChallenge', { kind: 'paid_from_credit', paymentId, amountUsd: '0.010000', claimed }],
    ['issuePaymentChallenge', { kind: 'plan_to_buy', reason: 'usage_exhausted', accessId: null }],
    ['claimPaidRequest', claimed],
    ['settlePaidRequest', billed],
    ['settlePaidRequest', { kind: 'released', usageError: 'meter_not_found' }],
    ['captureUsage', { usageEventIds: [] }],
    ['recordRequests', 0],
    ['sellerByHost', null],
  ];
  for (const [name, answer] of good) t.doesNotThrow(() => checkOutput(name, answer, 'proxy'), `${name}: ${JSON.stringify(answer)}`);

  const billing = billed.kind === 'billed' ? billed.billing : undefined;
  const { receipt: _receipt, ...withoutReceipt } = billed as Extract<typeof billed, { kind: 'billed' }>;
  const { claimed: _claimed, ...creditWithoutClaim } = { kind: 'paid_from_credit', paymentId, amountUsd: '0.010000', claimed };
  const wrong: [ProcedureName, unknown, RegExp, string][] = [
    ['settlePaidRequest', { ...billed, billing: { ...billing, chargedUsd: 0.01 } }, /expected string.*\n.*chargedUsd/, 'money as a number'],
    ['settlePaidRequest', { ...billed, billing: { ...billing, chargedUsd: 10_000n } }, /chargedUsd/, 'money as a bigint'],
    ['settlePaidRequest', { ...billed, billing: { ...billing, chargedUsd: '0.01' } }, /chargedUsd/, 'money without its six decimals'],
    ['settlePaidRequest', withoutReceipt, /receipt/, 'a field left out'],
    ['settlePaidRequest', { ...billed, chargedMicros: '10000' }, /Unrecognized key.*chargedMicros/, 'a field the contract does not name'],
    ['settlePaidRequest', { ...billed, kind: 'refunded' }, /kind/, 'a kind the contract does not know'],
    ['settlePaidRequest', { kind: 'failed', adjusted: [] }, /settlementReason/, 'a variant without its own field'],
    ['issuePaymentChallenge', creditWithoutClaim, /claimed/, 'paid from credit without the claim'],
    ['issuePaymentChallenge', { kind: 'plan_to_buy', reason: 'sold_out', accessId: null }, /reason/, 'a reason outside its list'],
    [
      'issuePaymentChallenge',
      { kind: 'challenge', challenge: { ...issued, expiresAt: new Date() } },
      /expiresAt/,
      'a Date, not its string',
    ],
    ['issuePaymentChallenge', { kind: 'challenge', challenge: { ...issued, amountMicros: 10_000 } }, /amountMicros/, 'micros as a number'],
    ['issuePaymentChallenge', { kind: 'challenge', challenge: { ...issued, network: 'base' } }, /network/, 'a network that is not CAIP-2'],
    ['claimPaidRequest', { ...claimed, buyerId: undefined }, /buyerId/, 'null left out'],
    ['claimPaidRequest', { ...claimed, requestId: 'req_1' }, /requestId/, 'an id of the wrong kind'],
    ['captureUsage', { usageEventIds: [42] }, /usageEventIds/, 'an id as a number'],
    ['captureUsage', null, /expected object/, 'nothing'],
    ['recordRequests', '3', /expected number/, 'a count as a string'],
  ];
  for (const [name, answer, message, what] of wrong) {
    t.throws(() => checkOutput(name, answer, 'proxy'), { name: 'ContractOutputError', procedure: name, message }, what);
  }
});

t.test('a client answered outside the contract fails, even when its caller catches', async (t) => {
  const fixture = fileURLToPath(new URL('../helpers/off-contract-client.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', (exit) => resolve(exit)));
  t.equal(out, 'unchecked {"usageEventIds":[42]}\ncaught ContractOutputError\n', 'unchecked: handed on; checked: thrown to the caller');
  t.equal(code, 1, 'and the process ends although the caller caught it');
  t.match(err, /ContractOutputError: captureUsage answered outside the contract \(checked by the proxy\)/);
  t.match(err, /usageEventIds\[0\]/, 'naming where');
});

/**
 * A rail whose facilitator admits every payment and settles it at once (or fails it, when told):
 * every answer below is the control-plane's own; only the chain is left out.
 */
function stubRail() {
  const network = 'eip155:31337' as const;
  const from = (payload: PaymentPayload) => (payload.payload as { authorization: { from: string } }).authorization.from;
  const state = { failSettlement: false };
  const rail: PaymentRail = {
    name: 'test_usd',
    network,
    token: { address: `0x${'11'.repeat(20)}`, name: 'Test USD', version: '1', decimals: 6, symbol: 'TUSD' },
    facilitator: {
      verify: async (payload) => ({ isValid: true, payer: from(payload) }),
      settle: async (payload, requirements) =>
        state.failSettlement
          ? { status: 'failed', reason: 'insufficient_funds', message: 'Not enough funds.', network }
          : {
              status: 'settled',
              transaction: `0x${randomBytes(32).toString('hex')}`,
              network,
              payer: from(payload),
              amount: requirements.amount,
            },
      supported: async () => ({ kinds: [], extensions: [], signers: {} }),
    },
    maxTimeoutSeconds: 300,
    readsChain: false,
  };
  return { rail, state };
}

for (const provider of testProviders()) {
  t.test(`${provider}: the hot path's answers from a running control-plane match the contract`, async (t) => {
    const { rail, state } = stubRail();
    const cp = await startTestControlPlane(t, provider, {}, rail);
    const { organizationId } = await cp.bootstrap();
    const sellerId = newId('seller');
    await cp.db.seller.create({
      data: {
        id: sellerId,
        organizationId,
        name: 'Acme',
        slug: 'acme',
        upstreamBaseUrl: 'http://127.0.0.1:9',
        payToAddress: `0x${'22'.repeat(20)}`,
      },
    });
    await seedPricedService(cp.db, { organizationId, sellerId, priceMicros: 10_000n });
    // Checked here whatever the environment says (the control-plane checks too, in tests).
    const { client, close } = createControlPlaneClient(cp.url, cp.internalToken, { checkOutputs: true });
    t.teardown(close);
    const called = new Set<ProcedureName>();
    const call = <Name extends ProcedureName>(name: Name, input: ProcedureInput<Name>) => {
      called.add(name);
      return (client.call as (name: Name, input: ProcedureInput<Name>) => Promise<ProcedureOutput<Name>>)(name, input);
    };

    const wallet = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
    const bound = { sellerId, method: 'GET', pathAndQuery: '/search?q=1', bodyDigest: '0'.repeat(64) };
    const challenge = async (usage: { meterSlug: string; quantity: number }[], agentId: string | null = null) =>
      call('issuePaymentChallenge', {
        requestId: newId('request'),
        agentId,
        buyerId: null,
        ...bound,
        serviceSlug: 'search',
        usage,
        sandbox: false,
      });
    const challenged = async (usage: { meterSlug: string; quantity: number }[]): Promise<IssuedChallenge> => {
      const outcome = await challenge(usage);
      if (outcome.kind !== 'challenge') throw new Error(`challenged, not ${outcome.kind}`);
      return outcome.challenge;
    };
    const pay = (issued: IssuedChallenge) =>
      call('claimPaidRequest', {
        paymentId: issued.paymentId,
        ...bound,
        protocol: 'x402',
        payload: {
          x402Version: 2,
          accepted: issued.requirements,
          payload: { signature: '0x00', authorization: { from: wallet, nonce: `0x${randomBytes(32).toString('hex')}` } },
        },
      });
    const settle = (paymentId: string, upstreamStatus: number, usage?: ProcedureInput<'captureUsage'>) =>
      call('settlePaidRequest', { paymentId, upstreamStatus, ...(usage ? { usage } : {}) });
    const usage = (requestId: string, meterSlug: string) => ({
      requestId,
      sellerId,
      organizationId,
      usage: [{ serviceSlug: 'search', meterSlug, quantity: 1 }],
    });

    // Two calls authorized, one used: the charge is one, the other is the payer's credit.
    const first = await challenged([{ meterSlug: 'calls', quantity: 2 }]);
    t.match(first, { amountUsd: '0.020000', amountMicros: '20000', usage: [{ meterSlug: 'calls', quantity: 2 }] });
    const claim = await pay(first);
    t.match(claim, { payer: wallet, kind: 'call', buyerId: null });
    t.match(await call('captureUsage', usage(claim.requestId, 'calls')), { usageEventIds: [/^use_/] });
    t.match(await settle(first.paymentId, 200), {
      kind: 'billed',
      billing: { status: 'settled', chargedUsd: '0.010000', remainderUsd: '0.010000', remainderHandling: 'credited' },
      receipt: { success: true, payer: wallet },
    });

    // The wallet's agent now has credit with the seller: its next call is paid from it.
    const fromCredit = await challenge([{ meterSlug: 'calls', quantity: 1 }], claim.agentId);
    t.match(fromCredit, { kind: 'paid_from_credit', amountUsd: '0.010000', claimed: { agentId: claim.agentId, payer: wallet } });
    if (fromCredit.kind !== 'paid_from_credit') throw new Error('not paid from credit');
    t.match(await settle(fromCredit.paymentId, 200), { kind: 'billed', billing: { paidFrom: 'credit' }, receipt: null });

    // An identity proof, a call the seller failed (with usage hub refuses), a settlement that fails.
    const proof = await challenged([]);
    t.match(await pay(proof), { kind: 'identity' });
    t.same(await settle(proof.paymentId, 200), { kind: 'identity' });

    const broken = await challenged([{ meterSlug: 'calls', quantity: 1 }]);
    const brokenClaim = await pay(broken);
    t.match(await settle(broken.paymentId, 502, usage(brokenClaim.requestId, 'storage')), { kind: 'released', usageError: String });

    const unpaid = await challenged([{ meterSlug: 'calls', quantity: 1 }]);
    await pay(unpaid);
    state.failSettlement = true;
    t.match(await settle(unpaid.paymentId, 200), { kind: 'failed', settlementReason: 'insufficient_funds' });

    t.same([...called].sort(), [...HOT_PATH_PROCEDURES].sort(), 'every procedure of the hot path was called');
  });
}
