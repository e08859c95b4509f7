import t from 'tap';
import { chainControls, chainReader, tokenBalance } from '../../helpers/chain.js';
import { startSettlementChain } from '../../helpers/settlement-chain.js';

/**
 * Settlements whose outcome the facilitator cannot see: they are pending with the transaction
 * hash, never failed, and settling the same payment again finishes them without paying twice.
 */

t.setTimeout(120_000);

/** Short timeouts, so a lost answer turns into a pending settlement quickly. */
const { chain, proxy, payer, payee, facilitatorVia, newPayment } = await startSettlementChain(t, {
  rpcTimeoutMs: 500,
  receiptTimeoutMs: 1_000,
});

t.beforeEach(() => proxy.faults.clear());

t.test('a broadcast whose answer is lost is pending with its hash, and settling again confirms it', async (t) => {
  const facilitator = facilitatorVia(proxy.url);
  const { requirements, payment } = await newPayment();
  const before = await tokenBalance(chain, payee);

  proxy.faults.set('eth_sendRawTransaction', 'swallow');
  const pending = await facilitator.settle(payment, requirements);
  t.match(pending, { status: 'pending', network: chain.network, payer, transaction: /^0x[0-9a-f]{64}$/ });
  if (pending.status !== 'pending' || !pending.transaction) return;

  const receipt = await chainReader(chain).getTransactionReceipt({ hash: pending.transaction });
  t.equal(receipt.status, 'success', 'the transfer did reach the chain, under the hash reported');
  t.equal(await tokenBalance(chain, payee), before + 10_000n);

  proxy.faults.clear();
  t.same(await facilitator.settle(payment, requirements), {
    status: 'settled',
    transaction: pending.transaction,
    network: chain.network,
    payer,
    amount: '10000',
  });
  t.equal(await tokenBalance(chain, payee), before + 10_000n, 'paid once');
});

t.test('a receipt that does not come in time is pending; a new facilitator finds the settlement on chain', async (t) => {
  const facilitator = facilitatorVia(proxy.url);
  const { requirements, payment } = await newPayment();
  const before = await tokenBalance(chain, payee);

  proxy.faults.set('eth_getTransactionReceipt', 'swallow');
  const pending = await facilitator.settle(payment, requirements);
  t.match(pending, { status: 'pending', transaction: /^0x/ });

  // As after a restart: no memory of the broadcast, only the chain.
  const restarted = facilitatorVia(chain.rpcUrl);
  const settled = await restarted.settle(payment, requirements);
  t.match(settled, { status: 'settled', alreadySettled: true, transaction: pending.status === 'pending' ? pending.transaction : '' });
  t.equal(await tokenBalance(chain, payee), before + 10_000n, 'paid once');
});

t.test('a broadcast that never arrived is sent again by the next settle of the same payment', async (t) => {
  const facilitator = facilitatorVia(proxy.url);
  const { requirements, payment } = await newPayment();
  const before = await tokenBalance(chain, payee);

  proxy.faults.set('eth_sendRawTransaction', 'drop');
  const pending = await facilitator.settle(payment, requirements);
  t.match(pending, { status: 'pending', transaction: /^0x/ });
  t.equal(await tokenBalance(chain, payee), before, 'nothing reached the chain');

  proxy.faults.clear();
  t.match(await facilitator.settle(payment, requirements), {
    status: 'settled',
    transaction: pending.status === 'pending' ? pending.transaction : '',
  });
  t.equal(await tokenBalance(chain, payee), before + 10_000n, 'paid once');
});

t.test('a broadcast that never arrived fails once the authorization has lapsed, and the settler goes on', async (t) => {
  let clock = Date.now();
  const facilitator = facilitatorVia(proxy.url, { now: () => clock });
  const { requirements, payment } = await newPayment();
  const before = await tokenBalance(chain, payer);

  proxy.faults.set('eth_sendRawTransaction', 'drop');
  const pending = await facilitator.settle(payment, requirements);
  t.match(pending, { status: 'pending', transaction: /^0x/ });
  t.match(await facilitator.settle(payment, requirements), { status: 'pending' }, 'still unknown while the authorization is valid');

  clock += 120_000;
  t.match(await facilitator.settle(payment, requirements), { status: 'failed', reason: 'authorization_expired' });
  t.equal(await tokenBalance(chain, payer), before, 'nothing moved');

  // The dropped transaction took a nonce the chain never saw; the next payment must not queue behind it.
  proxy.faults.clear();
  clock = Date.now();
  const next = await newPayment();
  t.match(await facilitator.settle(next.payment, next.requirements), { status: 'settled' });
  t.equal(await tokenBalance(chain, payer), before - 10_000n);
});

t.test('a payout whose nonce another transaction took is sent anew, not waited for forever', async (t) => {
  // A held payment: moved into the escrow, then paid out whole. The payout needs no authorization
  // that could lapse, so nothing but the chain ends the wait for it.
  const facilitator = facilitatorVia(proxy.url, { escrow: chain.escrow });
  const { requirements, payment } = await newPayment(chain.escrow);
  t.match(await facilitator.settle(payment, requirements), { status: 'settled' }, 'held');
  const before = await tokenBalance(chain, payee);
  const payout = () => facilitator.settleEscrowed(payment, requirements, { payee, charged: 10_000n, deposited: true });

  proxy.faults.set('eth_sendRawTransaction', 'drop');
  const lost = await payout();
  t.match(lost, { status: 'pending', transaction: /^0x/ }, 'the payout never reached the node');
  // Another settler process on the same key (a restart) counts its nonce from the chain and takes the lost one's.
  proxy.faults.clear();
  const other = await newPayment();
  t.match(await facilitatorVia(chain.rpcUrl).settle(other.payment, other.requirements), { status: 'settled' });

  const paid = await payout();
  t.match(paid, { status: 'settled', transaction: /^0x/ });
  t.not(paid.transaction, lost.transaction, 'a new transaction');
  t.equal(await tokenBalance(chain, payee), before + 20_000n, 'the payout and the other payment, each once');
  t.match(await payout(), { status: 'settled', alreadySettled: true }, 'settling again finds it on chain');
  t.equal(await tokenBalance(chain, payee), before + 20_000n);
});

t.test('two settlers on one key (two control-planes): a nonce the other took is counted afresh, not a failure', async (t) => {
  const [first, second] = [facilitatorVia(chain.rpcUrl), facilitatorVia(chain.rpcUrl, { sendSync: true })];
  const before = await tokenBalance(chain, payee);
  for (const facilitator of [first, second, first, second]) {
    const { requirements, payment } = await newPayment();
    t.match(await facilitator.settle(payment, requirements), { status: 'settled' });
  }
  const side = await Promise.all(
    [first, second, first, second].map(async (facilitator) => {
      const { requirements, payment } = await newPayment();
      return (await facilitator.settle(payment, requirements)).status;
    }),
  );
  t.same(side, ['settled', 'settled', 'settled', 'settled'], 'side by side too');
  t.equal(await tokenBalance(chain, payee), before + 80_000n);
});

t.test('the same authorization settled twice at once: one transaction, both answered with it', async (t) => {
  const facilitator = facilitatorVia(proxy.url);
  const { requirements, payment } = await newPayment();
  const before = await tokenBalance(chain, payee);
  proxy.calls.clear();
  const [first, second] = await Promise.all([facilitator.settle(payment, requirements), facilitator.settle(payment, requirements)]);
  t.match(first, { status: 'settled', amount: '10000' });
  t.same(second, first, 'the second waited for the first');
  t.equal(proxy.calls.get('eth_sendRawTransaction'), 1, 'one transaction sent');
  t.equal(await tokenBalance(chain, payee), before + 10_000n);
});

t.test('a failure the chain could explain, when the chain cannot be searched, is not known yet', async (t) => {
  let clock = Date.now();
  const facilitator = facilitatorVia(proxy.url, { now: () => clock });
  const { requirements, payment } = await newPayment();
  clock += 120_000; // lapsed: only an earlier settlement could still settle it
  proxy.faults.set('eth_getLogs', 'drop');
  t.match(await facilitator.settle(payment, requirements), { status: 'pending', message: /could not be searched/ });
  proxy.faults.clear();
  t.match(await facilitator.settle(payment, requirements), { status: 'failed', reason: 'authorization_expired' }, 'searched, it fails');
});

t.test('a transfer still in the pool when a restarted settler settles the payment again: pending, then settled once', async (t) => {
  const controls = chainControls(t, chain);
  const facilitator = facilitatorVia(chain.rpcUrl);
  const { requirements, payment } = await newPayment();
  const before = await tokenBalance(chain, payee);

  await controls.automine(false);
  const first = await facilitator.settle(payment, requirements);
  t.match(first, { status: 'pending', transaction: /^0x/ }, 'sent, not mined');
  t.equal(await controls.pending(), 1);

  // As after a restart: no memory of the broadcast, and the pool's transaction holds the nonce.
  const restarted = facilitatorVia(chain.rpcUrl);
  t.match(await restarted.settle(payment, requirements), { status: 'pending' }, 'not failed: the transfer is on its way');
  t.equal(await controls.pending(), 1, 'and not sent twice');

  await controls.mine();
  await controls.automine(true);
  const settled = await facilitatorVia(chain.rpcUrl).settle(payment, requirements);
  t.match(settled, { status: 'settled', alreadySettled: true, transaction: first.status === 'pending' ? first.transaction : '' });
  t.equal(await tokenBalance(chain, payee), before + 10_000n, 'paid once');
});
