import t from 'tap';
import { localRail } from '../../../control-plane/payments/rail.js';
import { finishPendingSettlements } from '../../../control-plane/payments/settlement/pending.js';
import { settleAndRecord } from '../../../control-plane/payments/settlement/record.js';
import { CONTROL_PLANE_CALL_TIMEOUT_MS } from '../../../shared/contract.js';
import { chainReader, tokenBalance } from '../../helpers/chain.js';
import { settlingWith } from '../../helpers/local-facilitator.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { x402Fetch } from '../../helpers/x402-agent.js';

/** Answers the first `n` settles "pending" without submitting anything, as a timed-out RPC would. */
function pendingFirst(n: number) {
  let left = n;
  return settlingWith(async (p, r, real) => {
    if (left-- > 0) return { status: 'pending', transaction: undefined, network: r.network, message: 'injected: outcome unknown' };
    return real.settle(p, r);
  });
}

t.test('a settlement with an unknown outcome answers settling, is finished later, and charges once', async (t) => {
  const { chain, rail, db, payTo, payerKey, url } = await startPaidWorld(t, 'sqlite', { wrapFacilitator: pendingFirst(1) });
  const pay = x402Fetch(payerKey);
  const before = await tokenBalance(chain, payTo);

  const res = await pay(url('/search?q=pending'));
  t.equal(res.status, 200, 'the seller’s response is delivered');
  t.same(
    JSON.parse(res.headers.get('hub-billing') ?? '{}'),
    { status: 'settling', remainderHandling: 'credited', settleTransactionHash: null },
    'amounts are withheld while settling',
  );
  t.equal(res.headers.get('hub-usage-error'), null, 'an unknown outcome is not a failure');
  const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=pending' } });
  t.equal(attempt.status, 'settling');
  t.equal(await tokenBalance(chain, payTo), before, 'nothing moved yet');

  t.equal(await finishPendingSettlements(db, { live: rail }, 0), 1, 'the pending settlement is finished');
  const settled = await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } });
  t.equal(settled.status, 'settled');
  t.match(settled.settleTxHash, /^0x[0-9a-f]{64}$/);
  t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'paid once');

  t.equal(await finishPendingSettlements(db, { live: rail }, 0), 0, 'nothing is left to finish');
  t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'never charged twice');
});

t.test('a broadcast whose receipt is not seen yet: settling with its hash, and no receipt until it settles', async (t) => {
  let unseen = true;
  const receiptUnseen = settlingWith(async (p, r, real) => {
    const result = await real.settle(p, r);
    if (!unseen || result.status !== 'settled') return result;
    unseen = false;
    return { status: 'pending', transaction: result.transaction, network: r.network, message: 'injected: no receipt yet' };
  });
  const { chain, rail, db, payTo, payerKey, url } = await startPaidWorld(t, 'sqlite', { wrapFacilitator: receiptUnseen });
  const pay = x402Fetch(payerKey);
  const before = await tokenBalance(chain, payTo);

  const res = await pay(url('/search?q=unseen'));
  t.equal(res.status, 200);
  const billing = JSON.parse(res.headers.get('hub-billing') ?? '{}');
  t.match(billing, { status: 'settling', settleTransactionHash: /^0x[0-9a-f]{64}$/ }, 'the transaction the agent can follow');
  t.equal(res.headers.get('payment-response'), null, 'a receipt says settled: none while settling, as with MPP');

  t.equal(await finishPendingSettlements(db, { live: rail }, 0), 1);
  const settled = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=unseen' } });
  t.match(settled, { status: 'settled', settleTxHash: billing.settleTransactionHash });
  t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'paid once');
});

t.test('a control-plane that dies after broadcasting: its successor finds the transfer on chain, records it, sends nothing', async (t) => {
  // The settlement reaches the chain, then the process is gone: no answer, nothing recorded.
  let broadcast: () => void = () => {};
  const reachedChain = new Promise<void>((resolve) => (broadcast = resolve));
  const diesAfterSettling = settlingWith(async (p, r, real) => {
    await real.settle(p, r);
    broadcast();
    return new Promise(() => {});
  });
  const { chain, db, payTo, payerKey, url } = await startPaidWorld(t, 'sqlite', { wrapFacilitator: diesAfterSettling });
  const pay = x402Fetch(payerKey);
  const before = await tokenBalance(chain, payTo);

  const agentGivesUp = new AbortController();
  const call = pay(url('/search?q=crash'), { signal: agentGivesUp.signal }).catch(() => 'no answer');
  await reachedChain;
  agentGivesUp.abort();
  t.equal(await call, 'no answer');
  const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=crash' } });
  t.equal(attempt.status, 'settling', 'the database knows only that settlement began');
  t.equal(attempt.settleTxHash, null);
  t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'the transfer was mined');

  // The successor: a new control-plane's rail, which remembers nothing of the first one's transaction.
  const successor = localRail(chain);
  t.teardown(() => (successor.facilitator as { close?: () => Promise<void> }).close?.());
  t.equal(await finishPendingSettlements(db, { live: successor }, 0), 1, 'found and finished');
  const settled = await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } });
  t.equal(settled.status, 'settled');
  t.match(settled.settleTxHash, /^0x[0-9a-f]{64}$/);
  const receipt = await chainReader(chain).getTransactionReceipt({ hash: settled.settleTxHash as `0x${string}` });
  t.equal(receipt.status, 'success', 'the recorded transaction is the one that moved the funds');
  t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'never sent twice');
  t.equal(await finishPendingSettlements(db, { live: successor }, 0), 0, 'nothing is left to finish');
});

t.test('a settlement slower than the proxy waits: the answer goes out settling, and the settlement is recorded behind it', async (t) => {
  let slowed = 0;
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  // Slower than the proxy waits by construction: it settles only when the test lets it, once the
  // agent has the answer and the pending loop has been asked about it.
  const slowChain = settlingWith(async (p, r, real) => {
    slowed++;
    await released;
    return real.settle(p, r);
  });
  const { chain, rail, db, payTo, payerKey, url } = await startPaidWorld(t, 'sqlite', { wrapFacilitator: slowChain });
  t.teardown(() => release()); // never left holding, should an assertion below fail
  const pay = x402Fetch(payerKey);
  const before = await tokenBalance(chain, payTo);

  const started = Date.now();
  const res = await pay(url('/search?q=slow'));
  t.equal(res.status, 200, 'the seller’s answer is delivered');
  t.ok(Date.now() - started < CONTROL_PLANE_CALL_TIMEOUT_MS, 'within the proxy’s wait');
  t.same(JSON.parse(res.headers.get('hub-billing') ?? '{}'), {
    status: 'settling',
    remainderHandling: 'credited',
    settleTransactionHash: null,
  });
  t.match(await res.json(), { results: ['a', 'b'] });
  t.equal(slowed, 1);

  const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=slow' } });
  t.equal(await finishPendingSettlements(db, { live: rail }, 0), 0, 'the pending loop leaves a settlement this process is still making');
  t.equal(slowed, 1, 'not submitted a second time');
  release();
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    if ((await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } })).status === 'settled') break;
  }
  const settled = await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } });
  t.equal(settled.status, 'settled', 'the settlement went on behind the answer');
  t.match(settled.settleTxHash, /^0x[0-9a-f]{64}$/);
  t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'paid once');
});

t.test(
  'a settlement whose answer is lost: the seller’s answer still goes out, marked settling, and the pending loop finishes it',
  async (t) => {
    let failNext = true;
    const lostAnswer = settlingWith(async (p, r, real) => {
      if (failNext) {
        failNext = false;
        throw new Error('injected: the settlement call broke');
      }
      return real.settle(p, r);
    });
    const { chain, rail, db, payTo, payerKey, url } = await startPaidWorld(t, 'sqlite', { wrapFacilitator: lostAnswer });
    const pay = x402Fetch(payerKey);
    const before = await tokenBalance(chain, payTo);

    const res = await pay(url('/search?q=lost'));
    t.equal(res.status, 200, 'not a 500: the agent paid for this answer');
    t.same(JSON.parse(res.headers.get('hub-billing') ?? '{}'), { status: 'settling' }, 'the outcome is not known');
    t.equal(res.headers.get('hub-usage-error'), null, 'not a failure that would have the agent pay again');
    t.match(await res.json(), { results: ['a', 'b'] });

    const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=lost' } });
    t.equal(attempt.status, 'settling');
    t.equal(await finishPendingSettlements(db, { live: rail }, 0), 1);
    t.equal((await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } })).status, 'settled');
    t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'paid once');
  },
);

t.test('tried again after a lost answer, a failure that says nothing of the earlier try leaves it settling', async (t) => {
  let answer: 'pending' | 'unavailable' | 'rejected' | 'real' = 'pending';
  const scripted = settlingWith(async (p, r, real) => {
    if (answer === 'pending') return { status: 'pending', transaction: undefined, network: r.network, message: 'injected: timed out' };
    if (answer === 'real') return real.settle(p, r);
    const reason = answer === 'unavailable' ? 'facilitator_unavailable' : 'facilitator_rejected';
    return { status: 'failed', reason, network: r.network, message: 'injected: restarting' };
  });
  const { chain, rail, db, payTo, payerKey, url } = await startPaidWorld(t, 'sqlite', { wrapFacilitator: scripted });
  const before = await tokenBalance(chain, payTo);
  t.equal((await x402Fetch(payerKey)(url('/search?q=again'))).status, 200);
  const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=again' } });
  // The first try may have gone through: an unreachable or unexplained refusal now proves nothing.
  for (const next of ['unavailable', 'rejected'] as const) {
    answer = next;
    await finishPendingSettlements(db, { live: rail }, 0);
    t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } }), { status: 'settling', chargedMicros: 10_000n }, next);
  }
  answer = 'real';
  t.equal(await finishPendingSettlements(db, { live: rail }, 0), 1);
  t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } }), { status: 'settled' });
  t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'paid once');
});

t.test('two settlements of one payment that disagree: a settled recorded after a failed restores the charge', async (t) => {
  let answer: 'pending' | 'failed' | 'real' = 'pending';
  const scripted = settlingWith(async (p, r, real) => {
    if (answer === 'pending') return { status: 'pending', transaction: undefined, network: r.network, message: 'injected: unknown' };
    if (answer === 'failed') return { status: 'failed', reason: 'transaction_reverted', network: r.network, message: 'injected' };
    return real.settle(p, r);
  });
  const { rail, db, payerKey, url } = await startPaidWorld(t, 'sqlite', { wrapFacilitator: scripted });
  const pay = x402Fetch(payerKey);
  t.equal((await pay(url('/search?q=race'))).status, 200);
  const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=race' } });
  t.equal(attempt.chargedMicros, 10_000n);

  // One settlement records a failure first (the charge is zeroed), the other then finds it settled.
  answer = 'failed';
  await finishPendingSettlements(db, { live: rail }, 0);
  t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } }), { status: 'failed', chargedMicros: 0n });
  answer = 'real';
  t.match(await settleAndRecord(db, rail, attempt), { status: 'settled' });
  t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } }), {
    status: 'settled',
    chargedMicros: 10_000n,
    settlementReason: null,
  });
});

t.test(
  'a settlement no facilitator answer can tell (a remote one says the authorization is used): parked settling, looked at again only where the chain can be read',
  async (t) => {
    let settles = 0;
    const cannotTell = settlingWith(async (p, r, real) => {
      if (++settles > 1) return real.settle(p, r);
      return {
        status: 'pending',
        transaction: undefined,
        network: r.network,
        message: 'injected: used, by whom unknown',
        unresolvable: true,
      };
    });
    const { rail, db, payerKey, url } = await startPaidWorld(t, 'sqlite', { wrapFacilitator: cannotTell });
    const pay = x402Fetch(payerKey);
    const res = await pay(url('/search?q=parked'));
    t.equal(res.status, 200);
    t.match(JSON.parse(res.headers.get('hub-billing') ?? '{}'), { status: 'settling' });
    t.equal(res.headers.get('hub-usage-error'), null, 'not a failure: the payer may well have paid');
    const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=parked' } });
    t.match(attempt, { status: 'settling', settlementReason: 'outcome_unknown', chargedMicros: 10_000n });
    t.equal(await finishPendingSettlements(db, { live: { ...rail, readsChain: false } }, 0), 0);
    t.equal(settles, 1, 'not asked again where nothing can tell more');
    t.equal(await finishPendingSettlements(db, { live: rail }, 0), 1, 'a rail that reads the chain finishes it');
    t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } }), {
      status: 'settled',
      settlementReason: null,
      settleTxHash: /^0x[0-9a-f]{64}$/,
    });
  },
);
