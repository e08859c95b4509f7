import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t from 'tap';
import { privateKeyToAccount } from 'viem/accounts';
import type { Facilitator } from '../../../control-plane/facilitator/facilitator.js';
import { localRail } from '../../../control-plane/payments/rail.js';
import { finishPendingSettlements } from '../../../control-plane/payments/settle.js';
import { chainReader, tokenBalance } from '../../helpers/chain.js';
import { startPaidWorld } from '../../helpers/paid-world.js';

/** Answers the first `n` settles "pending" without submitting anything, as a timed-out RPC would. */
function pendingFirst(n: number) {
  let left = n;
  return (inner: Facilitator): Facilitator => ({
    verify: (p, r) => inner.verify(p, r),
    supported: () => inner.supported(),
    settle: async (p, r) => {
      if (left-- > 0) return { status: 'pending', transaction: undefined, network: r.network, message: 'injected: outcome unknown' };
      return inner.settle(p, r);
    },
  });
}

t.test('a settlement with an unknown outcome answers settling, is finished later, and charges once', async (t) => {
  const { chain, rail, db, payTo, payerKey, url } = await startPaidWorld(t, 'sqlite', { wrapFacilitator: pendingFirst(1) });
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(payerKey) });
  client.setSpendControls({ allowedAssets: true });
  const before = await tokenBalance(chain, payTo);

  const res = await wrapFetchWithPayment(fetch, client)(url('/search?q=pending'));
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

  t.equal(await finishPendingSettlements(db, rail, 0), 1, 'the pending settlement is finished');
  const settled = await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } });
  t.equal(settled.status, 'settled');
  t.match(settled.settleTxHash, /^0x[0-9a-f]{64}$/);
  t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'paid once');

  t.equal(await finishPendingSettlements(db, rail, 0), 0, 'nothing is left to finish');
  t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'never charged twice');
});

t.test('a control-plane that dies after broadcasting: its successor finds the transfer on chain, records it, sends nothing', async (t) => {
  // The settlement reaches the chain, then the process is gone: no answer, nothing recorded.
  let broadcast: () => void = () => {};
  const reachedChain = new Promise<void>((resolve) => (broadcast = resolve));
  const diesAfterSettling = (inner: Facilitator): Facilitator => ({
    verify: (p, r) => inner.verify(p, r),
    supported: () => inner.supported(),
    settle: async (p, r) => {
      await inner.settle(p, r);
      broadcast();
      return new Promise(() => {});
    },
  });
  const { chain, db, payTo, payerKey, url } = await startPaidWorld(t, 'sqlite', { wrapFacilitator: diesAfterSettling });
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(payerKey) });
  client.setSpendControls({ allowedAssets: true });
  const before = await tokenBalance(chain, payTo);

  const agentGivesUp = new AbortController();
  const call = wrapFetchWithPayment(fetch, client)(url('/search?q=crash'), { signal: agentGivesUp.signal }).catch(() => 'no answer');
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
  t.equal(await finishPendingSettlements(db, successor, 0), 1, 'found and finished');
  const settled = await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } });
  t.equal(settled.status, 'settled');
  t.match(settled.settleTxHash, /^0x[0-9a-f]{64}$/);
  const receipt = await chainReader(chain).getTransactionReceipt({ hash: settled.settleTxHash as `0x${string}` });
  t.equal(receipt.status, 'success', 'the recorded transaction is the one that moved the funds');
  t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'never sent twice');
  t.equal(await finishPendingSettlements(db, successor, 0), 0, 'nothing is left to finish');
});
