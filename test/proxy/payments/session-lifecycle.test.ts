import { randomBytes } from 'node:crypto';
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import pino from 'pino';
import t, { type Test } from 'tap';
import { type Address, type Hex, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { LocalFacilitator } from '../../../control-plane/facilitator/local-facilitator.js';
import type { PaymentRail } from '../../../control-plane/payments/rail.js';
import { channelConfigOf } from '../../../control-plane/sessions/channel-digests.js';
import { claimVouchers } from '../../../control-plane/sessions/claim-vouchers.js';
import { followLostDeposits } from '../../../control-plane/sessions/follow-deposits.js';
import { refundIdleChannels } from '../../../control-plane/sessions/refund-idle.js';
import { type SessionSchedule, startSessionLoops } from '../../../control-plane/sessions/session-loops.js';
import { batchSettlementAbi, localSessionRail, type SessionRail } from '../../../control-plane/sessions/session-rail.js';
import { chainSeconds, withdrawalDue } from '../../../control-plane/sessions/watch-withdrawals.js';
import { BATCH_SETTLEMENT_CONTRACT } from '../../../shared/payments/batch-settlement.js';
import { chainReader, chainWallet, tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { eventually } from '../../helpers/processes.js';
import { until } from '../../helpers/row-locks.js';
import { startRpcFaultProxy } from '../../helpers/rpc-fault-proxy.js';

// The sessions' lifecycle beyond the call (D-334..D-336): hub's own refund of an idle channel, a
// payer's refund whose outcome the chain's RPC lost, and a voucher refused once the payer's timed
// withdrawal can be finalized by the chain's clock. All paid by x402's unmodified client.

const fromB64 = (value: string | null) => JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));
const HOUR_MS = 3_600_000;
/** The payer's side of the channel contract: its timed withdrawal, which hub never sends. */
const withdrawAbi = parseAbi([
  'struct ChannelConfig { address payer; address payerAuthorizer; address receiver; address receiverAuthorizer; address token; uint40 withdrawDelay; bytes32 salt; }',
  'function initiateWithdraw(ChannelConfig config, uint128 amount)',
]);

for (const provider of testProviders()) {
  t.test(`x402 batch-settlement sessions’ lifecycle on ${provider}`, async (t) => {
    // Channels idle for 3 s are refunded (looked for every second): the worker runs only where a test starts it.
    const world = await startPaidWorld(t, provider, { env: { HUB_SESSIONS_IDLE_REFUND_S: '3' } });
    const { api, chain, hub, db, sellerId, served, url, payTo } = world;
    const rail = world.rail as PaymentRail & { sessions: SessionRail };
    const reader = chainReader(chain);
    const logger = pino({ level: 'silent' });
    t.equal((await api.patch(`/v1/sellers/${sellerId}`, hub.apiKey, { x402Schemes: ['exact', 'batch-settlement'] })).status, 200);
    const configured = hub.cp.config.sessions;
    t.equal(configured.idleRefundMs, 3_000, 'the idle time as configured');

    /** An unmodified x402 client paying with batch-settlement only, from `key`, on a channel of its own. */
    const sessionClient = (key: Hex) => {
      const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(privateKeyToAccount(key), reader), {
        salt: `0x${randomBytes(32).toString('hex')}` as Hex,
      });
      const client = new x402Client();
      client.register(chain.network, scheme);
      client.setSpendControls({ allowedAssets: true });
      return { scheme, pay: wrapFetchWithPayment(fetch, client) };
    };
    /** Three calls (the first deposits five calls' worth), each served: the channel they paid on. */
    const payThree = async (t: Test, pay: typeof fetch, tag: string) => {
      let id = '' as Hex;
      for (const n of [1, 2, 3]) {
        const res = await pay(url(`/search?q=${tag}-${n}`));
        t.equal(res.status, 200, await res.clone().text());
        id = fromB64(res.headers.get('payment-response')).extra.channelState.channelId;
      }
      return id;
    };
    const settlerNonce = () => reader.getTransactionCount({ address: chain.settler.address as Address });
    const channelRow = (id: string) => db.sessionChannel.findUniqueOrThrow({ where: { id } });
    const records = (kind: string) => db.sessionTransaction.findMany({ where: { kind }, orderBy: { createdAt: 'asc' } });
    let stop: (() => Promise<void>) | undefined;
    const run = (schedule: SessionSchedule) => {
      stop = startSessionLoops(db, rail, logger, schedule);
    };
    t.teardown(() => stop?.());
    /** Only what a test asks for: claims, settles and the watch an hour apart, nothing claimed on size. */
    const quiet: SessionSchedule = {
      claimIntervalMs: HOUR_MS,
      settleIntervalMs: HOUR_MS,
      withdrawWatchIntervalMs: HOUR_MS,
      claimAtMicros: 1_000_000_000n,
    };

    await t.test('an idle channel: what was charged claimed, the rest back to the payer, in one transaction', async (t) => {
      const payerKey = world.payerKey;
      const payer = privateKeyToAccount(payerKey).address;
      const { pay } = sessionClient(payerKey);
      const sellerBefore = await rail.sessions.receiverTotals(payTo as Address, chain.token.address as Address);
      // The worker, with idle refunds only (its first claim round finds nothing to claim).
      run({ ...quiet, idleRefundMs: configured.idleRefundMs });
      const id = await payThree(t, pay, 'idle');
      const deposited = 50_000n;

      // A call at the seller holds the channel: even idle past any time, it is not refunded under it.
      const atSeller = served.length + 1;
      const held = pay(url('/hold?q=idle-held'));
      await until(async () => served.length >= atSeller, 'the held call at the seller');
      const nonce = await settlerNonce();
      t.same(await refundIdleChannels(db, rail, 1), { refunded: 0, amount: 0n, pending: 0 }, 'not refunded under a call');
      t.equal(await settlerNonce(), nonce, 'nothing sent');
      world.releaseHold();
      t.equal((await held).status, 200);
      const charged = 40_000n;
      t.match(await channelRow(id), { balance: deposited, charged, totalClaimed: 0n, heldBy: null });
      t.equal(await settlerNonce(), nonce, 'nothing claimed: no claim on the interval or on size here');

      // Once the channel was idle for 3 s, the worker refunds it.
      const walletBefore = await tokenBalance(chain, payer);
      t.ok(await eventually(async () => (await channelRow(id)).refundNonce === 1, 30_000), 'refunded once idle');
      await stop!();
      t.equal(await tokenBalance(chain, payer), walletBefore + deposited - charged, 'the payer got back its balance less what was charged');
      t.same(await rail.sessions.channel(id), { balance: charged, totalClaimed: charged }, 'what was charged claimed on chain');
      const sellerAfter = await rail.sessions.receiverTotals(payTo as Address, chain.token.address as Address);
      t.equal(sellerAfter.totalClaimed - sellerBefore.totalClaimed, charged, 'the seller’s claimed total rose by the charges');
      t.equal(await rail.sessions.refundNonce(id), 1n);
      t.equal(await settlerNonce(), nonce + 1, 'one transaction: the claim and the refund together');
      t.match(await channelRow(id), { balance: charged, totalClaimed: charged, charged, refundNonce: 1, heldBy: null });
      const refunds = await records('refund');
      t.equal(refunds.length, 1, 'one refund recorded');
      t.match(refunds[0], { status: 'mined', amount: deposited - charged, openKey: null });
      t.match(JSON.parse(refunds[0]!.itemsJson), { channelId: id, totalClaimed: String(charged), balance: String(charged) });

      // The client still counts its old balance: its next voucher is above the channel's. The
      // corrective 402 has it read the chain, and it deposits again and pays.
      const servedBefore = served.length;
      const next = await pay(url('/search?q=idle-after'));
      t.equal(next.status, 200, await next.clone().text());
      const receipt = fromB64(next.headers.get('payment-response'));
      t.match(receipt.transaction, /^0x[0-9a-f]{64}$/, 'a new deposit');
      const redeposit = BigInt(receipt.amount);
      t.ok(redeposit >= 10_000n);
      t.match(receipt.extra.channelState, {
        channelId: id,
        chargedCumulativeAmount: String(charged + 10_000n),
        balance: String(charged + redeposit),
        refundNonce: '1',
      });
      t.equal(served.length, servedBefore + 1, 'served once: the refused voucher was not forwarded');
      t.equal(await tokenBalance(chain, payer), walletBefore + deposited - charged - redeposit);
      t.match(await channelRow(id), { balance: charged + redeposit, charged: charged + 10_000n });
      // And on, with vouchers only.
      const after = await pay(url('/search?q=idle-after-2'));
      t.equal(after.status, 200);
      t.equal(fromB64(after.headers.get('payment-response')).extra.channelState.chargedCumulativeAmount, String(charged + 20_000n));
    });

    // From here hub's sessions reach the chain through a JSON-RPC relay that can lose answers (its
    // own settler state: the world's facilitator sends nothing for sessions after this).
    const relay = await startRpcFaultProxy(t, chain.rpcUrl);
    const lossy = new LocalFacilitator({
      rpcUrl: relay.url,
      chainId: chain.chainId,
      tokens: [{ address: chain.token.address, name: chain.token.name, version: chain.token.version }],
      settlerPrivateKey: chain.settler.privateKey as Hex,
      pollingIntervalMs: 25,
      sendInOrder: true,
      sendSync: true,
      receiptTimeoutMs: 500,
    });
    t.teardown(() => lossy.close());
    rail.sessions = localSessionRail(lossy);

    await t.test('a payer’s refund whose outcome was lost: the worker follows it, finishes its attempt', async (t) => {
      await claimVouchers(db, rail); // what the first channel charged since: the worker below has nothing else to send
      const refunderKey = chain.accounts[4]!.privateKey as Hex;
      const refunder = privateKeyToAccount(refunderKey).address;
      const { scheme, pay } = sessionClient(refunderKey);
      const id = await payThree(t, pay, 'lost-refund');
      const charged = 30_000n;
      const walletBefore = await tokenBalance(chain, refunder);
      const nonce = await settlerNonce();

      // The node takes the transaction and mines it, but its answer never comes, nor its receipt.
      relay.faults.set('eth_sendRawTransactionSync', 'no-receipt');
      relay.faults.set('eth_getTransactionReceipt', 'unknown');
      await t.rejects(scheme.refund(url('/search?q=lost-refund')), 'the payer is told to come back');
      t.equal(await settlerNonce(), nonce + 1, 'the refund was sent');
      t.equal(await rail.sessions.refundNonce(id), 1n, 'and landed');
      const record = (await records('refund')).at(-1)!;
      t.match(record, { status: 'sent', openKey: chain.network, amount: 20_000n });
      t.match(record.transaction, /^0x[0-9a-f]{64}$/);
      const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { channelId: id, status: 'in_flight' } });
      t.match(await channelRow(id), { heldBy: record.id, balance: 50_000n, refundNonce: 0 }, 'the channel held by the refund');

      // Meanwhile the channel takes no call: it is not checked against the balance from before the refund.
      const servedBefore = served.length;
      const busy = await pay(url('/search?q=lost-refund-busy'));
      t.equal(busy.status, 402);
      t.equal(fromB64(busy.headers.get('payment-required')).error, 'invalid_batch_settlement_evm_channel_busy');
      t.equal(served.length, servedBefore, 'nothing forwarded');

      // The chain answers again; the worker's first round follows the refund from the chain.
      relay.faults.clear();
      run({ ...quiet, claimIntervalMs: 200 });
      await until(
        async () => (await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } })).status === 'released',
        'the refund followed',
      );
      await stop!();
      t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } }), {
        status: 'released',
        chargedMicros: 0n,
        settlementReason: 'session_refund',
        refundTxHash: record.transaction,
      });
      t.match(await db.sessionTransaction.findUniqueOrThrow({ where: { id: record.id } }), {
        status: 'mined',
        openKey: null,
        transaction: record.transaction,
      });
      t.match(await channelRow(id), { balance: charged, totalClaimed: charged, refundNonce: 1, heldBy: null });
      t.equal(await tokenBalance(chain, refunder), walletBefore + 20_000n, 'the payer got back its balance less what was charged');
      t.equal(await settlerNonce(), nonce + 1, 'not sent again');
    });

    await t.test('a refund meeting a claim whose outcome was lost: the claim followed at once, then the refund', async (t) => {
      const refunderKey = chain.accounts[4]!.privateKey as Hex;
      const refunder = privateKeyToAccount(refunderKey).address;
      const { scheme, pay } = sessionClient(refunderKey); // a channel of its own (a new salt)
      const id = await payThree(t, pay, 'open-claim');
      const charged = 30_000n;
      const nonce = await settlerNonce();

      // The claim of the three charges lands, but its sender never learns it: the record stays open.
      relay.faults.set('eth_sendRawTransactionSync', 'no-receipt');
      relay.faults.set('eth_getTransactionReceipt', 'unknown');
      await t.rejects(claimVouchers(db, rail), 'the claim round does not know how it ended');
      relay.faults.clear();
      const claim = (await records('claim')).at(-1)!;
      t.match(claim, { status: 'sent', openKey: chain.network });
      t.same(await rail.sessions.channel(id), { balance: 50_000n, totalClaimed: charged }, 'the claim is on chain');
      t.equal((await channelRow(id)).totalClaimed, 0n, 'the mirror does not know it yet');

      // No worker runs here: the refund itself follows the open claim, and is not told to come back.
      const walletBefore = await tokenBalance(chain, refunder);
      const refunded = await scheme.refund(url('/search?q=open-claim'));
      t.match(refunded, { success: true, network: chain.network, amount: '20000' });
      t.match(refunded.extra?.channelState, { channelId: id, balance: String(charged), totalClaimed: String(charged), refundNonce: '1' });
      t.match(await db.sessionTransaction.findUniqueOrThrow({ where: { id: claim.id } }), { status: 'mined', openKey: null });
      t.match((await records('refund')).at(-1), { status: 'mined', openKey: null, amount: 20_000n });
      t.equal(await tokenBalance(chain, refunder), walletBefore + 20_000n, 'the payer got back its balance less what was charged');
      t.equal(await settlerNonce(), nonce + 2, 'the claim once, the refund once: nothing sent again');
      t.match(await channelRow(id), { balance: charged, totalClaimed: charged, charged, refundNonce: 1, heldBy: null });
    });

    await t.test('a deposit whose outcome was lost: the same payment sent again is answered from the chain', async (t) => {
      const payerKey = world.payerKey;
      const payer = privateKeyToAccount(payerKey).address;
      // The agent's payments as it sends them, to send one again as it is.
      const signatures: string[] = [];
      const recording: typeof fetch = (input, init) => {
        const request = new Request(input, init);
        const signature = request.headers.get('payment-signature');
        if (signature) signatures.push(signature);
        return fetch(request);
      };
      const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(privateKeyToAccount(payerKey), reader), {
        salt: `0x${randomBytes(32).toString('hex')}` as Hex,
      });
      const client = new x402Client();
      client.register(chain.network, scheme);
      client.setSpendControls({ allowedAssets: true });
      const pay = wrapFetchWithPayment(recording, client);
      const walletBefore = await tokenBalance(chain, payer);
      const nonce = await settlerNonce();
      const servedBefore = served.length;

      relay.faults.set('eth_sendRawTransactionSync', 'no-receipt');
      relay.faults.set('eth_getTransactionReceipt', 'unknown');
      const lost = await pay(url('/search?q=deposit-lost'));
      t.equal(lost.status, 503, 'the agent is told to send it again');
      t.match(await lost.json(), { error: 'service_unavailable' });
      relay.faults.clear();
      t.equal(served.length, servedBefore, 'nothing forwarded');
      t.equal(await settlerNonce(), nonce + 1, 'the deposit was sent');
      t.equal(await tokenBalance(chain, payer), walletBefore - 50_000n, 'and landed');
      const record = (await records('deposit')).at(-1)!;
      t.match(record, { status: 'sent', amount: 50_000n });
      t.match(record.transaction, /^0x[0-9a-f]{64}$/);

      // The same payment again, as the agent sent it: answered from what the chain did, nothing sent again.
      t.equal(signatures.length, 1);
      const again = await fetch(url('/search?q=deposit-lost'), { headers: { 'payment-signature': signatures[0]! } });
      t.equal(again.status, 200, await again.clone().text());
      const receipt = fromB64(again.headers.get('payment-response'));
      t.match(receipt, { success: true, transaction: record.transaction, amount: '50000', extra: { chargedAmount: '10000' } });
      t.match(receipt.extra.channelState, { balance: '50000', chargedCumulativeAmount: '10000' });
      const id = receipt.extra.channelState.channelId as string;
      t.equal(served.length, servedBefore + 1, 'served once');
      t.equal(await settlerNonce(), nonce + 1, 'no second deposit transaction');
      t.equal(await tokenBalance(chain, payer), walletBefore - 50_000n, 'the payer paid one deposit');
      t.match(await db.sessionTransaction.findUniqueOrThrow({ where: { id: record.id } }), { status: 'mined', openKey: null });
      t.match(await db.paymentAttempt.findFirstOrThrow({ where: { channelId: id, status: 'settled' } }), {
        settleTxHash: record.transaction,
        chargedMicros: 10_000n,
      });
      t.match(await channelRow(id), { balance: 50_000n, charged: 10_000n });

      // The client itself never learned the deposit's outcome: it reads the chain, gets the corrective 402, and pays with a voucher.
      const next = await pay(url('/search?q=deposit-lost-next'));
      t.equal(next.status, 200, await next.clone().text());
      t.match(fromB64(next.headers.get('payment-response')), {
        transaction: '',
        extra: { channelState: { channelId: id, chargedCumulativeAmount: '20000', balance: '50000' } },
      });
      t.equal(await tokenBalance(chain, payer), walletBefore - 50_000n);
    });

    // Last on each chain: it moves the chain's clock a day on, past every authorization signed by the wall clock.
    await t.test('a deposit whose outcome was lost and never sent again: the worker finds its money on chain', async (t) => {
      const { pay } = sessionClient(world.payerKey);
      relay.faults.set('eth_sendRawTransactionSync', 'no-receipt');
      relay.faults.set('eth_getTransactionReceipt', 'unknown');
      const lost = await pay(url('/search?q=deposit-never-again'));
      t.equal(lost.status, 503);
      await lost.arrayBuffer();
      relay.faults.clear();
      const record = (await records('deposit')).at(-1)!;
      t.equal(record.status, 'sent', 'its outcome is not known');
      const { channelId } = JSON.parse(record.itemsJson) as { channelId: Hex };
      t.equal((await channelRow(channelId)).balance, 0n, 'hub does not count the deposit');
      t.equal((await rail.sessions.channel(channelId)).balance, 50_000n, 'though it is in the channel');

      // The agent never sends it again; the watch's round, once the record is old enough, follows it.
      t.same(await followLostDeposits(db, rail, 60_000), { landed: 0, failed: 0 }, 'not before the payer had time to send it again');
      t.same(await followLostDeposits(db, rail, 0), { landed: 1, failed: 0 });
      t.equal((await channelRow(channelId)).balance, 50_000n, 'the mirror counts it');
      t.match(await db.sessionTransaction.findUniqueOrThrow({ where: { id: record.id } }), { status: 'mined', openKey: null });
      t.same(await followLostDeposits(db, rail, 0), { landed: 0, failed: 0 }, 'followed once');
    });

    await t.test('a voucher past the withdrawal’s deadline by the chain’s clock: refused, nothing forwarded or charged', async (t) => {
      const withdrawerKey = chain.accounts[5]!.privateKey as Hex;
      const _withdrawer = privateKeyToAccount(withdrawerKey);
      const { pay } = sessionClient(withdrawerKey);
      run({ ...quiet, withdrawWatchIntervalMs: 100 });
      const id = await payThree(t, pay, 'deadline');
      const mirrored = await channelRow(id);
      // The channel's config as hub mirrors it (the payer's own address among it).
      const config = channelConfigOf(mirrored);
      const wallet = chainWallet(chain, withdrawerKey);
      const hash = await wallet.writeContract({
        address: BATCH_SETTLEMENT_CONTRACT,
        abi: withdrawAbi,
        functionName: 'initiateWithdraw',
        args: [config, 50_000n],
      } as never);
      t.equal((await reader.waitForTransactionReceipt({ hash })).status, 'success');
      const [, initiatedAt] = await reader.readContract({
        address: BATCH_SETTLEMENT_CONTRACT,
        abi: batchSettlementAbi,
        functionName: 'pendingWithdrawals',
        args: [id],
      });
      await until(async () => (await channelRow(id)).withdrawRequestedAt === BigInt(initiatedAt), 'the withdrawal seen');
      await until(async () => (await channelRow(id)).totalClaimed === 30_000n, 'the charges claimed at once');

      // Before its deadline a voucher is taken (and claimed at once).
      const before = await pay(url('/search?q=deadline-before'));
      t.equal(before.status, 200);
      await until(async () => (await channelRow(id)).totalClaimed === 40_000n, 'the new charge claimed at once');

      // The chain's clock moves past the deadline; hub's does not.
      const deadline = initiatedAt + config.withdrawDelay;
      const rpc = (method: string, params: unknown[] = []) =>
        fetch(chain.rpcUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        });
      await rpc('evm_increaseTime', [config.withdrawDelay]);
      await rpc('evm_mine');
      await until(() => chainSeconds(chain.network) >= deadline, 'the watch reading the chain’s new time');
      const withdrawing = { withdrawRequestedAt: initiatedAt, withdrawDelay: config.withdrawDelay };
      t.notOk(withdrawalDue(withdrawing), 'by hub’s clock the withdrawal could not be finalized yet');
      t.ok(withdrawalDue(withdrawing, chainSeconds(chain.network)), 'by the chain’s it can');

      const servedBefore = served.length;
      const attemptsBefore = await db.paymentAttempt.count({ where: { channelId: id, status: 'settled' } });
      const refused = await pay(url('/search?q=deadline-after'));
      t.equal(refused.status, 402);
      t.equal(fromB64(refused.headers.get('payment-required')).error, 'invalid_batch_settlement_evm_channel_withdrawing');
      t.match(await refused.json(), {
        error: 'payment_required',
        settlementReason: 'invalid_batch_settlement_evm_channel_withdrawing',
      });
      t.equal(served.length, servedBefore, 'nothing forwarded');
      t.match(await channelRow(id), { charged: 40_000n, heldBy: null }, 'nothing charged');
      t.equal(await db.paymentAttempt.count({ where: { channelId: id, status: 'settled' } }), attemptsBefore);
      await stop!();
    });
  });
}
