import t from 'tap';
import { chainReader, tokenBalance } from '../../helpers/chain.js';
import { startSettlementChain } from '../../helpers/settlement-chain.js';

/**
 * Settling with eth_sendRawTransactionSync (EIP-7966), as the local rail does: the receipt comes
 * with the send, no receipt is polled for; a node without the method, or one that took the
 * transaction without a receipt, still settles it once.
 */

t.setTimeout(120_000);

const { chain, proxy, payer, payee, facilitatorVia, newPayment } = await startSettlementChain(t, {
  sendSync: true,
  rpcTimeoutMs: 1_000,
  receiptTimeoutMs: 2_000,
});

const count = (method: string) => proxy.calls.get(method) ?? 0;

t.beforeEach(() => {
  proxy.faults.clear();
  proxy.calls.clear();
});

t.test('the receipt comes with the send: one request per settlement, none to poll', async (t) => {
  const facilitator = facilitatorVia(proxy.url);
  const before = await tokenBalance(chain, payee);
  const results = [];
  for (let i = 0; i < 3; i++) {
    const { requirements, payment } = await newPayment();
    results.push(await facilitator.settle(payment, requirements));
  }
  t.same(
    results.map((r) => r.status),
    ['settled', 'settled', 'settled'],
  );
  t.equal(count('eth_sendRawTransactionSync'), 3);
  t.equal(count('eth_sendRawTransaction'), 0);
  t.equal(count('eth_getTransactionReceipt'), 0, 'no receipt was asked for');
  for (const r of results) {
    if (r.status !== 'settled') continue;
    t.equal((await chainReader(chain).getTransactionReceipt({ hash: r.transaction })).status, 'success');
  }
  t.equal(await tokenBalance(chain, payee), before + 30_000n);
});

t.test('settlements sent at once each get their own mined transfer', async (t) => {
  const facilitator = facilitatorVia(proxy.url);
  const before = await tokenBalance(chain, payee);
  const payments = await Promise.all(Array.from({ length: 6 }, () => newPayment()));
  const results = await Promise.all(payments.map(({ payment, requirements }) => facilitator.settle(payment, requirements)));
  t.same(
    results.map((r) => r.status),
    Array(6).fill('settled'),
  );
  t.equal(new Set(results.map((r) => (r.status === 'settled' ? r.transaction : ''))).size, 6);
  t.equal(count('eth_getTransactionReceipt'), 0);
  t.equal(await tokenBalance(chain, payee), before + 60_000n);
});

t.test('a node without the method: sent the plain way, and never asked again', async (t) => {
  const facilitator = facilitatorVia(proxy.url);
  proxy.faults.set('eth_sendRawTransactionSync', 'unknown');
  const before = await tokenBalance(chain, payee);
  for (let i = 0; i < 2; i++) {
    const { requirements, payment } = await newPayment();
    t.match(await facilitator.settle(payment, requirements), { status: 'settled', payer });
  }
  t.equal(count('eth_sendRawTransactionSync'), 1, 'asked once');
  t.equal(count('eth_sendRawTransaction'), 2);
  t.ok(count('eth_getTransactionReceipt') >= 2, 'receipts polled for');
  t.equal(await tokenBalance(chain, payee), before + 20_000n, 'each paid once');
});

t.test('a node that took the transaction without a receipt (EIP-7966 timeout): followed to its receipt', async (t) => {
  const facilitator = facilitatorVia(proxy.url);
  proxy.faults.set('eth_sendRawTransactionSync', 'no-receipt');
  const before = await tokenBalance(chain, payee);
  const { requirements, payment } = await newPayment();
  const settled = await facilitator.settle(payment, requirements);
  t.match(settled, { status: 'settled', payer, amount: '10000' });
  t.ok(count('eth_getTransactionReceipt') >= 1, 'the receipt was looked for');
  t.equal(await tokenBalance(chain, payee), before + 10_000n, 'paid once');

  // The settler still sends with the receipt afterwards: a timeout is not a missing method.
  proxy.faults.clear();
  const next = await newPayment();
  t.match(await facilitator.settle(next.payment, next.requirements), { status: 'settled' });
  t.equal(count('eth_sendRawTransactionSync'), 2);
});

t.test('a lost answer to the send is pending with its hash; settling again confirms it without paying twice', async (t) => {
  const facilitator = facilitatorVia(proxy.url);
  proxy.faults.set('eth_sendRawTransactionSync', 'swallow');
  const before = await tokenBalance(chain, payee);
  const { requirements, payment } = await newPayment();
  const pending = await facilitator.settle(payment, requirements);
  t.match(pending, { status: 'pending', transaction: /^0x[0-9a-f]{64}$/ });
  t.equal(await tokenBalance(chain, payee), before + 10_000n, 'the transfer reached the chain');

  proxy.faults.clear();
  t.match(await facilitator.settle(payment, requirements), {
    status: 'settled',
    transaction: pending.status === 'pending' ? pending.transaction : '',
  });
  t.equal(await tokenBalance(chain, payee), before + 10_000n, 'paid once');
});
