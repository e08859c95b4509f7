import { randomBytes } from 'node:crypto';
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme, signVoucher } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import pino from 'pino';
import t, { type Test } from 'tap';
import { type Address, getAddress, type Hex, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { PaymentRail } from '../../../control-plane/payments/rail.js';
import { channelConfigOf } from '../../../control-plane/sessions/channel-digests.js';
import { claimVouchers } from '../../../control-plane/sessions/claim-vouchers.js';
import { type SessionSchedule, startSessionLoops } from '../../../control-plane/sessions/session-loops.js';
import { batchSettlementAbi, type SessionRail } from '../../../control-plane/sessions/session-rail.js';
import { settleClaimed } from '../../../control-plane/sessions/settle-claimed.js';
import { createProxy } from '../../../proxy/create.js';
import { listen } from '../../../runtime/http-server.js';
import { formatUsd } from '../../../shared/money.js';
import { BATCH_SETTLEMENT_CONTRACT } from '../../../shared/payments/batch-settlement.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { chainReader, chainWallet, tokenBalance } from '../../helpers/chain.js';
import { startReplica } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { eventually } from '../../helpers/processes.js';
import { until } from '../../helpers/row-locks.js';
import { callsAtOnce, LOST_CHANNEL_REFUSALS } from '../../helpers/session-calls.js';

const fromB64 = (value: string | null) => JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));
const billingOf = (res: Response) => JSON.parse(res.headers.get('hub-billing') ?? '{}');
const HOUR_MS = 3_600_000;
const channelsAbi = parseAbi(['function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)']);
/** The payer's side of the channel contract: its timed withdrawal, which hub never sends. */
const withdrawAbi = parseAbi([
  'struct ChannelConfig { address payer; address payerAuthorizer; address receiver; address receiverAuthorizer; address token; uint40 withdrawDelay; bytes32 salt; }',
  'function initiateWithdraw(ChannelConfig config, uint128 amount)',
  'function finalizeWithdraw(ChannelConfig config)',
  'error WithdrawNotReady(uint40 finalizeAfter)',
]);

for (const provider of testProviders()) {
  t.test(`x402 batch-settlement sessions on ${provider}`, async (t) => {
    // Claims every second and on 0.02 unclaimed on a channel, settles every second: the worker runs only where a test starts it.
    const world = await startPaidWorld(t, provider, {
      env: { HUB_SESSIONS_CLAIM_INTERVAL_S: '1', HUB_SESSIONS_SETTLE_INTERVAL_S: '1', HUB_SESSIONS_CLAIM_AT_USD: '0.02' },
    });
    const { api, chain, hub, payerKey, sellerId, served, url } = world;
    const reader = chainReader(world.chain);
    const payer = privateKeyToAccount(payerKey);

    /** An unmodified x402 client that pays with batch-settlement only, its channel state in its own memory. */
    const sessionClient = () => {
      const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(payer, reader));
      const client = new x402Client();
      client.register(chain.network, scheme);
      client.setSpendControls({ allowedAssets: true });
      return { scheme, pay: wrapFetchWithPayment(fetch, client) };
    };
    const patchSchemes = (x402Schemes: unknown) =>
      api.patch(`/v1/sellers/${sellerId}`, hub.apiKey, { x402Schemes }) as Promise<{ status: number; body: Record<string, any> }>;

    await t.test('x402Schemes: exact by default, validated, stored', async (t) => {
      const read = await api.get(`/v1/sellers/${sellerId}`, hub.apiKey);
      t.same(read.body.seller.x402Schemes, ['exact']);
      for (const bad of [['batch-settlement'], ['exact', 'upto'], ['exact', 'exact'], 'exact', []]) {
        const refused = await patchSchemes(bad);
        t.equal(refused.status, 400, `refused: ${JSON.stringify(bad)}`);
      }
      const unpaid = await fetch(url('/search?q=exact-only'));
      t.same(
        ((await unpaid.json()) as { accepts: PaymentRequirements[] }).accepts.map((a) => a.scheme),
        ['exact'],
      );
      const changed = await patchSchemes(['exact', 'batch-settlement']);
      t.equal(changed.status, 200);
      t.same(changed.body.seller.x402Schemes, ['exact', 'batch-settlement']);
    });

    await t.test('the 402 offers exact and batch-settlement for the same price; MPP unchanged', async (t) => {
      const res = await fetch(url('/search?q=offer'));
      t.equal(res.status, 402);
      const body = (await res.json()) as { accepts: PaymentRequirements[] };
      const header = fromB64(res.headers.get('payment-required'));
      t.same(
        header.accepts.map((a: PaymentRequirements) => a.scheme),
        ['exact', 'batch-settlement'],
      );
      t.same(body.accepts, header.accepts);
      const [exact, session] = body.accepts as [PaymentRequirements, PaymentRequirements];
      t.equal(session.amount, exact.amount);
      t.equal(session.asset, exact.asset);
      t.equal(session.payTo, exact.payTo);
      t.match(session.extra, {
        receiverAuthorizer: chain.settler.address,
        withdrawDelay: 86_400,
        name: chain.token.name,
        version: chain.token.version,
        paymentId: exact.extra.paymentId,
      });
      t.match(res.headers.get('www-authenticate'), /^Payment id="[^"]+", realm="acme\.pay\.localhost", method="evm", intent="charge"/);
    });

    const { scheme, pay } = sessionClient();
    const before = await tokenBalance(chain, payer.address);
    let channelId = '';

    await t.test('the first call deposits, paid by hub’s settler; the channel is on chain', async (t) => {
      const settlerEth = await reader.getBalance({ address: chain.settler.address as Address });
      const res = await pay(url('/search?q=1'));
      t.equal(res.status, 200, await res.clone().text());
      const receipt = fromB64(res.headers.get('payment-response'));
      t.match(receipt, { success: true, network: chain.network, amount: '50000', extra: { chargedAmount: '10000' } });
      t.match(receipt.transaction, /^0x[0-9a-f]{64}$/);
      t.match(receipt.extra.channelState, { balance: '50000', totalClaimed: '0', chargedCumulativeAmount: '10000' });
      channelId = receipt.extra.channelState.channelId;
      t.match(billingOf(res), { status: 'settled', chargedUsd: '0.010000', settleTransactionHash: receipt.transaction });
      // The deposit (x402's client deposits five times the price by default) left the payer's wallet.
      t.equal(await tokenBalance(chain, payer.address), before - 50_000n);
      const [balance, totalClaimed] = await reader.readContract({
        address: BATCH_SETTLEMENT_CONTRACT,
        abi: channelsAbi,
        functionName: 'channels',
        args: [channelId as `0x${string}`],
      });
      t.equal(balance, 50_000n);
      t.equal(totalClaimed, 0n);
      t.ok((await reader.getBalance({ address: chain.settler.address as Address })) < settlerEth, 'the settler paid the gas');
    });

    await t.test('later calls send vouchers only: nothing on chain, charged on the channel', async (t) => {
      const blockBefore = await reader.getBlockNumber();
      for (const n of [2, 3, 4]) {
        const res = await pay(url(`/search?q=${n}`));
        t.equal(res.status, 200);
        const receipt = fromB64(res.headers.get('payment-response'));
        t.match(receipt, { success: true, transaction: '', amount: '', extra: { chargedAmount: '10000' } });
        t.equal(receipt.extra.channelState.chargedCumulativeAmount, String(n * 10_000));
        t.match(billingOf(res), { status: 'settled', chargedUsd: '0.010000', settleTransactionHash: null });
      }
      t.equal(await reader.getBlockNumber(), blockBefore, 'no transaction for a voucher');
      t.equal(await tokenBalance(chain, payer.address), before - 50_000n);
      t.equal(served.length >= 4, true);
    });

    await t.test('a client that lost its state gets the corrective 402, takes hub’s state and pays', async (t) => {
      const fresh = sessionClient();
      const servedBefore = served.length;
      const res = await fresh.pay(url('/search?q=5'));
      t.equal(res.status, 200, await res.clone().text());
      const receipt = fromB64(res.headers.get('payment-response'));
      t.equal(receipt.extra.channelState.chargedCumulativeAmount, '50000');
      t.equal(served.length, servedBefore + 1, 'the refused voucher was not forwarded');
      t.ok(scheme, 'the first client is unchanged');
    });

    await t.test('a stale voucher is refused with the channel’s state, nothing forwarded', async (t) => {
      const unpaid = await fetch(url('/search?q=stale'));
      const header = fromB64(unpaid.headers.get('payment-required'));
      const requirements = header.accepts.find((a: PaymentRequirements) => a.scheme === 'batch-settlement');
      // A voucher one call behind: the ceiling of a cumulative already charged.
      const stale = await new BatchSettlementEvmScheme(toClientEvmSigner(payer)).createPaymentPayload(2, requirements);
      const servedBefore = served.length;
      const paid = await fetch(url('/search?q=stale'), {
        headers: {
          'payment-signature': Buffer.from(JSON.stringify({ ...stale, accepted: requirements, resource: header.resource })).toString(
            'base64',
          ),
        },
      });
      t.equal(paid.status, 402);
      const refusal = fromB64(paid.headers.get('payment-required'));
      t.equal(refusal.error, 'invalid_batch_settlement_evm_cumulative_amount_mismatch');
      t.match(refusal.accepts[0].extra.channelState, { channelId, chargedCumulativeAmount: '50000', balance: '50000' });
      t.match(refusal.accepts[0].extra.voucherState, { signedMaxClaimable: '50000' });
      t.match(await paid.json(), {
        error: 'payment_required',
        reason: 'settlement_failed',
        settlementReason: 'invalid_batch_settlement_evm_cumulative_amount_mismatch',
      });
      t.equal(served.length, servedBefore);
    });

    /** A fresh 402's batch-settlement requirements and the x402 document they came in. */
    const offer = async (path: string) => {
      const unpaid = await fetch(url(path));
      const header = fromB64(unpaid.headers.get('payment-required'));
      return { header, requirements: header.accepts.find((a: PaymentRequirements) => a.scheme === 'batch-settlement') };
    };
    const sendPaid = (path: string, header: { resource: unknown }, requirements: PaymentRequirements, payload: unknown) =>
      fetch(url(path), {
        headers: {
          'payment-signature': Buffer.from(
            JSON.stringify({ x402Version: 2, accepted: requirements, resource: header.resource, payload }),
          ).toString('base64'),
        },
      });

    await t.test('charged what was used, within the voucher’s ceiling; the rest stays in the channel', async (t) => {
      // Priced at a ceiling of 3 calls, 1 used: the voucher authorizes 3, the channel is charged 1.
      const res = await pay(url('/search?max=3&used=1'));
      t.equal(res.status, 200, await res.clone().text());
      const receipt = fromB64(res.headers.get('payment-response'));
      t.equal(receipt.extra.chargedAmount, '10000');
      t.equal(receipt.extra.channelState.chargedCumulativeAmount, '60000');
      t.match(billingOf(res), { authorizedUsd: '0.030000', chargedUsd: '0.010000', remainderHandling: 'escrow_returned' });
      // The client counts from what was charged: its next voucher is 60000 + the price, and is taken.
      const next = await pay(url('/search?q=after-ceiling'));
      t.equal(next.status, 200);
      t.equal(fromB64(next.headers.get('payment-response')).extra.channelState.chargedCumulativeAmount, '70000');
    });

    await t.test('requests on one channel take turns: a second while one is at the seller is busy', async (t) => {
      const atSeller = served.length + 1;
      const first = pay(url('/hold?q=turns'));
      // The first request holds the channel from its claim until the seller has answered it.
      for (let i = 0; i < 500 && served.length < atSeller; i++) await new Promise((r) => setTimeout(r, 10));
      // Held for as long as the call may stay claimed (HUB_STRANDED_CALL_MS, 15 minutes here), longer
      // than any seller may take: never lapsing under an answer still coming (D-354).
      const holding = await world.db.sessionChannel.findFirstOrThrow({ where: { heldBy: { not: null } } });
      t.ok(+holding.heldUntil! - Date.now() > 14 * 60_000, 'the channel is held as long as the call may stay claimed');
      const { header, requirements } = await offer('/search?q=turns-2');
      const servedBefore = served.length;
      const payment = await scheme.createPaymentPayload(2, requirements);
      const busy = await sendPaid('/search?q=turns-2', header, requirements, payment.payload);
      t.equal(busy.status, 402);
      t.equal(fromB64(busy.headers.get('payment-required')).error, 'invalid_batch_settlement_evm_channel_busy');
      t.equal(served.length, servedBefore, 'the busy request was not forwarded');
      world.releaseHold();
      t.equal((await first).status, 200);
    });

    await t.test('bad payments: each refused with the scheme’s code, nothing forwarded, nothing charged', async (t) => {
      const { header, requirements } = await offer('/search?q=bad');
      const good = (await scheme.createPaymentPayload(2, requirements)).payload as Record<string, any>;
      const flipped = `${good.voucher.signature.slice(0, 10)}${good.voucher.signature[10] === 'a' ? 'b' : 'a'}${good.voucher.signature.slice(11)}`;
      const cases: [string, unknown, string][] = [
        ['malformed', { type: 'voucher' }, 'invalid_batch_settlement_evm_voucher_payload'],
        ['a refund whose voucher is a call’s', { ...good, type: 'refund' }, 'invalid_batch_settlement_evm_cumulative_amount_mismatch'],
        [
          'another receiver',
          { ...good, channelConfig: { ...good.channelConfig, receiver: chain.accounts[4]!.address } },
          'invalid_batch_settlement_evm_receiver_mismatch',
        ],
        [
          'another token',
          { ...good, channelConfig: { ...good.channelConfig, token: chain.accounts[4]!.address } },
          'invalid_batch_settlement_evm_token_mismatch',
        ],
        [
          'another channel id',
          { ...good, voucher: { ...good.voucher, channelId: `0x${'1'.repeat(64)}` } },
          'invalid_batch_settlement_evm_channel_id_mismatch',
        ],
        [
          'a forged signature',
          { ...good, voucher: { ...good.voucher, signature: flipped } },
          'invalid_batch_settlement_evm_voucher_signature',
        ],
        [
          'a ceiling it did not sign',
          { ...good, voucher: { ...good.voucher, maxClaimableAmount: '1000000' } },
          'invalid_batch_settlement_evm_voucher_signature',
        ],
      ];
      const servedBefore = served.length;
      for (const [what, payload, code] of cases) {
        const res = await sendPaid('/search?q=bad', header, requirements, payload);
        t.equal(res.status, 402, what);
        t.equal(fromB64(res.headers.get('payment-required')).error, code, what);
      }
      t.equal(served.length, servedBefore);
      // The good one is still good: the attempt stayed open and the channel as it was.
      const res = await sendPaid('/search?q=bad', header, requirements, good);
      t.equal(res.status, 200);
    });

    await t.test('claims: what was charged, in one claimWithSignature, once', async (t) => {
      const readChannel = () =>
        reader.readContract({
          address: BATCH_SETTLEMENT_CONTRACT,
          abi: channelsAbi,
          functionName: 'channels',
          args: [channelId as `0x${string}`],
        });
      const [, claimedBefore] = await readChannel();
      t.equal(claimedBefore, 0n);
      const first = await claimVouchers(world.db, world.rail);
      t.equal(first.channels, 1);
      const mirrored = await world.db.sessionChannel.findUniqueOrThrow({ where: { id: channelId } });
      const [balance, claimed] = await readChannel();
      t.equal(claimed, mirrored.charged, 'the chain holds what hub charged as claimed');
      t.equal(mirrored.totalClaimed, mirrored.charged);
      t.ok(claimed <= mirrored.signedMaxClaimable, 'never above the voucher');
      t.equal(balance, mirrored.balance);
      t.same(await claimVouchers(world.db, world.rail), { channels: 0 }, 'nothing left to claim');
      // A client that lost its state now starts from the chain's claimed total, which is hub's count: no corrective 402.
      const res = await sessionClient().pay(url('/search?q=after-claim'));
      t.equal(res.status, 200);
      t.equal(fromB64(res.headers.get('payment-response')).extra.channelState.totalClaimed, String(claimed));
    });

    await t.test('a seller that stops offering sessions takes no voucher', async (t) => {
      const { header, requirements } = await offer('/search?q=off');
      const payment = await scheme.createPaymentPayload(2, requirements);
      t.equal((await patchSchemes(['exact'])).status, 200);
      const res = await sendPaid('/search?q=off', header, requirements, payment.payload);
      t.equal(res.status, 402);
      t.match(await res.json(), { error: 'payment_required', settlementReason: 'invalid_batch_settlement_evm_scheme' });
    });

    // Claims and settlements through the control-plane's worker and its timers, on a second
    // payer's channel (its own deposit covers the five calls below, so the settler sends no other
    // transaction meanwhile). The first channel's charges are claimed first: the baseline.
    t.equal((await patchSchemes(['exact', 'batch-settlement'])).status, 200);
    await claimVouchers(world.db, world.rail);
    const { db, payTo } = world;
    const rail = world.rail as PaymentRail & { sessions: SessionRail };
    const logger = pino({ level: 'silent' });
    const configured = hub.cp.config.sessions;
    const client = new x402Client();
    client.register(
      chain.network,
      new BatchSettlementEvmScheme(toClientEvmSigner(privateKeyToAccount(chain.accounts[5]!.privateKey as Hex), reader)),
    );
    client.setSpendControls({ allowedAssets: true });
    const paySecond = wrapFetchWithPayment(fetch, client);
    let second = '' as Hex;
    let calls = 0;
    const call = async () => {
      const res = await paySecond(url(`/search?q=second-${++calls}`));
      if (res.status !== 200) throw new Error(`call ${calls}: ${res.status} ${await res.text()}`);
      second = fromB64(res.headers.get('payment-response')).extra.channelState.channelId;
    };
    const mirror = () => db.sessionChannel.findUniqueOrThrow({ where: { id: second } });
    const records = (kind: string) => db.sessionTransaction.findMany({ where: { kind }, orderBy: { createdAt: 'asc' } });
    const claimsBefore = (await records('claim')).length;
    const settlerNonce = () => reader.getTransactionCount({ address: chain.settler.address as Address });
    const baseline = BigInt(Math.round(Number((await revenueSplit()).chargedUsd) * 1e6));
    /** The seller's voucher revenue, as the management API reports it. */
    async function revenueSplit() {
      const reply = await api.get(`/v1/analytics/sellers/${sellerId}?days=1`, hub.apiKey);
      t.equal(reply.status, 200);
      t.equal(
        reply.body.analytics.revenueUsd,
        reply.body.analytics.sessionRevenue.chargedUsd,
        'every charge of this seller is a voucher’s',
      );
      return reply.body.analytics.sessionRevenue as Record<'chargedUsd' | 'unclaimedUsd' | 'claimedUsd' | 'settledUsd', string>;
    }
    /** The split expected: the baseline claimed and unsettled until settled, plus these amounts of the second channel. */
    const split = (parts: { unclaimed?: bigint; claimed?: bigint; settled?: bigint }, baselineSettled = false) => ({
      chargedUsd: formatUsd(baseline + (parts.unclaimed ?? 0n) + (parts.claimed ?? 0n) + (parts.settled ?? 0n)),
      unclaimedUsd: formatUsd(parts.unclaimed ?? 0n),
      claimedUsd: formatUsd((baselineSettled ? 0n : baseline) + (parts.claimed ?? 0n)),
      settledUsd: formatUsd((baselineSettled ? baseline : 0n) + (parts.settled ?? 0n)),
    });
    t.same(await revenueSplit(), split({}), 'the first channel: all charged, all claimed');
    let stop: (() => Promise<void>) | undefined;
    const run = (schedule: SessionSchedule) => {
      stop = startSessionLoops(db, rail, logger, schedule);
    };
    t.teardown(() => stop?.());
    t.same(
      [configured.claimIntervalMs, configured.settleIntervalMs, configured.claimAtMicros],
      [1000, 1000, 20_000n],
      'the schedule as configured',
    );

    await t.test('a claim whose sender stopped after sending is followed from the chain, not sent again', async (t) => {
      // Claims on size only here: the intervals are an hour.
      run({ ...configured, claimIntervalMs: HOUR_MS, settleIntervalMs: HOUR_MS });
      await call(); // the deposit, and 0.01 charged: under the 0.02 threshold
      t.equal((await records('claim')).length, claimsBefore, 'below the threshold nothing is claimed');
      t.same(await revenueSplit(), split({ unclaimed: 10_000n }));

      // A control-plane sends a claim and stops before it learns the outcome: its record stays `sending`, no hash.
      const stopping = {
        ...rail,
        sessions: {
          ...rail.sessions,
          claim: (c: Parameters<SessionRail['claim']>[0]) => rail.sessions.claim(c).then(() => new Promise(() => {})),
        },
      };
      const nonce = await settlerNonce();
      void claimVouchers(db, stopping as PaymentRail);
      await until(async () => (await rail.sessions.channel(second)).totalClaimed === 10_000n, 'the claim landing');
      const left = (await records('claim')).at(-1);
      t.match(left, { status: 'sending', transaction: null, openKey: chain.network, amount: 10_000n });
      t.match(JSON.parse(left!.itemsJson), [{ channelId: second, totalClaimed: '10000', maxClaimableAmount: '10000' }]);
      t.equal((await mirror()).totalClaimed, 0n, 'the mirror follows a claim only once it is known mined');

      // The next call takes the channel to the threshold: a claim round follows the open claim, then claims the rest.
      await call();
      await until(async () => (await mirror()).totalClaimed === 20_000n, 'the claim on size');
      const claims = (await records('claim')).slice(claimsBefore);
      t.same(
        claims.map((c) => [c.status, c.amount, c.openKey]),
        [
          ['mined', 10_000n, null],
          ['mined', 10_000n, null],
        ],
      );
      t.equal(await settlerNonce(), nonce + 2, 'two claim transactions: the first was not sent again');
      t.same(await revenueSplit(), split({ claimed: 20_000n }));
      await stop!();
    });

    await t.test('a claim whose receipt was lost is followed by its hash’s effect; the interval claims the rest', async (t) => {
      await call();
      const lost = {
        ...rail,
        sessions: {
          ...rail.sessions,
          claim: async (c: Parameters<SessionRail['claim']>[0]) => {
            const sent = await rail.sessions.claim(c);
            return { status: 'unknown' as const, transaction: 'transaction' in sent ? sent.transaction : ('0x' as Hex), message: 'lost' };
          },
        },
      };
      await t.rejects(claimVouchers(db, lost as PaymentRail), /did not go through: unknown/);
      const sent = (await records('claim')).at(-1)!;
      t.equal(sent.status, 'sent');
      t.match(sent.transaction, /^0x[0-9a-f]{64}$/);
      t.equal((await mirror()).totalClaimed, 20_000n);
      const nonce = await settlerNonce();

      // Another charge, under the threshold; then the worker on the configured schedule (claims every
      // second), settling kept out of the way: its first round follows the lost claim, then claims the rest.
      await call();
      run({ ...configured, settleIntervalMs: HOUR_MS });
      await until(async () => (await mirror()).totalClaimed === 40_000n, 'the lost claim followed, the rest claimed on the interval');
      t.match(await db.sessionTransaction.findUniqueOrThrow({ where: { id: sent.id } }), {
        status: 'mined',
        transaction: sent.transaction,
      });
      t.equal(await settlerNonce(), nonce + 1, 'the lost claim was not sent again: one claim transaction, for the new charge');
      t.same(await revenueSplit(), split({ claimed: 40_000n }));
      await stop!();
    });

    await t.test('settle sends the seller’s wallet exactly what was claimed for it, on its schedule', async (t) => {
      await call(); // 0.01 more: charged, not claimed (the claim interval runs again below, so it may be by the time settle runs)
      t.same(await revenueSplit(), split({ unclaimed: 10_000n, claimed: 40_000n }));
      const before = await tokenBalance(chain, payTo as Address);
      const all = baseline + 50_000n; // micro-USD and token units alike: six decimals
      run(configured);
      await until(async () => (await mirror()).totalSettled === 50_000n, 'all claimed and settled');
      const settles = (await records('settle')).filter((s) => s.status === 'mined');
      t.ok(settles.length >= 1);
      t.equal(
        settles.reduce((sum, s) => sum + s.amount, 0n),
        all,
        'the settles sent everything claimed for the seller',
      );
      t.equal(await tokenBalance(chain, payTo as Address), before + all, 'the seller’s wallet rose by exactly what was claimed for it');
      t.match(JSON.parse(settles[0]!.itemsJson), { receiver: payTo.toLowerCase(), totalSettled: String(settles[0]!.amount) });
      t.same(await rail.sessions.receiverTotals(payTo as Address, chain.token.address as Address), {
        totalClaimed: all,
        totalSettled: all,
      });
      t.same(await revenueSplit(), split({ settled: 50_000n }, true));
      t.equal(await db.sessionTransaction.count({ where: { openKey: { not: null } } }), 0, 'nothing left open');
    });

    /** Three calls paid through `pay` (the first deposits), each served: the channel they paid on. */
    const payThree = async (t: Test, pay: typeof fetch, tag: string) => {
      let id = '' as Hex;
      for (const n of [1, 2, 3]) {
        const res = await pay(url(`/search?q=${tag}-${n}`));
        t.equal(res.status, 200);
        id = fromB64(res.headers.get('payment-response')).extra.channelState.channelId;
      }
      return id;
    };

    await t.test('a cooperative refund: the charges claimed, the rest back to the payer, in one transaction', async (t) => {
      await stop!();
      const refunder = privateKeyToAccount(chain.accounts[4]!.privateKey as Hex);
      const refundScheme = new BatchSettlementEvmScheme(toClientEvmSigner(refunder, reader));
      const refundClient = new x402Client();
      refundClient.register(chain.network, refundScheme);
      refundClient.setSpendControls({ allowedAssets: true });
      const payRefunder = wrapFetchWithPayment(fetch, refundClient);
      const walletBefore = await tokenBalance(chain, refunder.address);
      const id = await payThree(t, payRefunder, 'refund');
      const charged = 30_000n;
      const deposited = 50_000n;
      t.same(await rail.sessions.channel(id), { balance: deposited, totalClaimed: 0n }, 'charged, not claimed');
      const nonce = await settlerNonce();
      const mirrored = await db.sessionChannel.findUniqueOrThrow({ where: { id } });

      // Refunds by hand, as x402's client builds them: the voucher at what was charged, and an amount.
      const config = {
        payer: refunder.address,
        payerAuthorizer: refunder.address,
        receiver: getAddress(mirrored.receiver),
        receiverAuthorizer: getAddress(mirrored.receiverAuthorizer),
        token: getAddress(mirrored.token),
        withdrawDelay: mirrored.withdrawDelay,
        salt: mirrored.salt,
      };
      const refundBy = async (amount: unknown, at = charged) => {
        const { header, requirements } = await offer('/search?q=refund-by-hand');
        const voucher = await signVoucher(toClientEvmSigner(refunder), id, String(at), chain.network);
        const res = await sendPaid('/search?q=refund-by-hand', header, requirements, {
          type: 'refund',
          channelConfig: config,
          voucher,
          ...(amount === undefined ? {} : { amount }),
        });
        return { status: res.status, code: res.status === 402 ? fromB64(res.headers.get('payment-required')).error : undefined };
      };
      const servedBefore = served.length;
      // Above what is refundable, not a whole number, or a partial refund below one call's price (D-358).
      for (const amount of ['20001', '0', '-1', 'all', 5, '1', '9999']) {
        t.same(
          await refundBy(amount),
          { status: 402, code: 'invalid_batch_settlement_evm_refund_amount_invalid' },
          `refused: ${JSON.stringify(amount)}`,
        );
      }
      t.same(
        await refundBy(undefined, charged - 10_000n),
        { status: 402, code: 'invalid_batch_settlement_evm_cumulative_amount_mismatch' },
        'a voucher below what was charged',
      );
      await t.rejects(
        refundScheme.refund(url('/search?q=refund'), { amount: '20001' }),
        /refund_amount_invalid/,
        'x402’s client is told why',
      );
      t.same(await rail.sessions.channel(id), { balance: deposited, totalClaimed: 0n }, 'nothing changed on chain');
      t.equal(await settlerNonce(), nonce, 'no transaction sent');
      t.match(await db.sessionChannel.findUniqueOrThrow({ where: { id } }), {
        balance: deposited,
        totalClaimed: 0n,
        charged,
        refundNonce: 0,
      });
      t.equal(await tokenBalance(chain, refunder.address), walletBefore - deposited);

      // x402's client asks for all that is left.
      const refunded = await refundScheme.refund(url('/search?q=refund'));
      t.match(refunded, { success: true, network: chain.network, amount: '20000' });
      t.match(refunded.transaction, /^0x[0-9a-f]{64}$/);
      t.match(refunded.extra?.channelState, { channelId: id, balance: '30000', totalClaimed: '30000', refundNonce: '1' });
      t.equal(await tokenBalance(chain, refunder.address), walletBefore - charged, 'the payer got back its balance less what was charged');
      t.same(await rail.sessions.channel(id), { balance: charged, totalClaimed: charged }, 'what was charged claimed');
      t.equal(await rail.sessions.refundNonce(id), 1n);
      t.equal(await settlerNonce(), nonce + 1, 'the claim and the refund in one transaction');
      t.match(await db.sessionChannel.findUniqueOrThrow({ where: { id } }), { balance: charged, totalClaimed: charged, refundNonce: 1 });
      const record = (await records('refund')).at(-1);
      t.match(record, { status: 'mined', amount: 20_000n, openKey: null, transaction: refunded.transaction });
      t.match(await db.paymentAttempt.findFirst({ where: { refundTxHash: refunded.transaction } }), {
        status: 'released',
        chargedMicros: 0n,
        settlementReason: 'session_refund',
      });
      t.equal(served.length, servedBefore, 'no refund was forwarded to the seller');

      // Nothing is left to refund.
      t.same(await refundBy(undefined), { status: 402, code: 'invalid_batch_settlement_evm_refund_no_balance' });
      t.equal(await tokenBalance(chain, refunder.address), walletBefore - charged);
    });

    // The payer's timed withdrawal raced by hub's claim (D-309). Last on each chain: it moves the
    // chain's clock a day on, past every payment authorization signed by the wall clock.
    const withdrawalRace = () =>
      t.test('a timed withdrawal after vouchers: hub claims at once, the payer gets back only what was not charged', async (t) => {
        await stop?.();
        await claimVouchers(db, rail);
        const withdrawer = privateKeyToAccount(chain.accounts[4]!.privateKey as Hex);
        const withdrawClient = new x402Client();
        withdrawClient.register(
          chain.network,
          new BatchSettlementEvmScheme(toClientEvmSigner(withdrawer, reader), { salt: `0x${randomBytes(32).toString('hex')}` as Hex }),
        );
        withdrawClient.setSpendControls({ allowedAssets: true });
        const payWithdrawer = wrapFetchWithPayment(fetch, withdrawClient);
        // Claims neither on an interval nor on size: only the watch of withdrawals (every 100 ms) asks for one.
        run({
          ...configured,
          claimIntervalMs: HOUR_MS,
          settleIntervalMs: HOUR_MS,
          claimAtMicros: 1_000_000_000n,
          withdrawWatchIntervalMs: 100,
        });
        const walletBefore = await tokenBalance(chain, withdrawer.address);
        const id = await payThree(t, payWithdrawer, 'withdraw');
        const charged = 30_000n;
        const deposited = 50_000n;
        const channelRow = () => db.sessionChannel.findUniqueOrThrow({ where: { id } });
        const nonce = await settlerNonce();
        // Watch rounds go on: with no withdrawal under way, nothing is claimed.
        t.notOk(await eventually(async () => (await settlerNonce()) !== nonce, 400), 'no claim without a withdrawal');
        t.match(await channelRow(), { balance: deposited, charged, totalClaimed: 0n, withdrawRequestedAt: 0n });

        const mirrored = await channelRow();
        // The channel's config as hub mirrors it (the payer's own address among it).
        const config = channelConfigOf(mirrored);
        const wallet = chainWallet(chain, chain.accounts[4]!.privateKey as Hex);
        const send = async (functionName: 'initiateWithdraw' | 'finalizeWithdraw', args: readonly unknown[]) => {
          const hash = await wallet.writeContract({
            address: BATCH_SETTLEMENT_CONTRACT,
            abi: withdrawAbi,
            functionName,
            args,
          } as never);
          return reader.waitForTransactionReceipt({ hash });
        };
        const pending = () =>
          reader.readContract({
            address: BATCH_SETTLEMENT_CONTRACT,
            abi: batchSettlementAbi,
            functionName: 'pendingWithdrawals',
            args: [id],
          });
        // The payer asks for everything back.
        t.equal((await send('initiateWithdraw', [config, deposited])).status, 'success');
        const [, initiatedAt] = await pending();
        t.ok(initiatedAt > 0);

        await until(async () => (await channelRow()).totalClaimed === charged, 'the claim forced by the withdrawal');
        t.match(await channelRow(), { withdrawRequestedAt: BigInt(initiatedAt), totalClaimed: charged, balance: deposited });
        t.same(await rail.sessions.channel(id), { balance: deposited, totalClaimed: charged }, 'every charge claimed on chain');
        t.equal(await settlerNonce(), nonce + 1, 'one claim transaction');
        const { timestamp } = await reader.getBlock();
        t.ok(timestamp < BigInt(initiatedAt + config.withdrawDelay), 'claimed before the withdrawal could be finalized');
        // The corrective 402 tells a client the withdrawal hub saw.
        const { header, requirements } = await offer('/search?q=withdraw-state');
        const stale = await signVoucher(toClientEvmSigner(withdrawer), id, '10000', chain.network);
        const refused = await sendPaid('/search?q=withdraw-state', header, requirements, {
          type: 'voucher',
          channelConfig: config,
          voucher: stale,
        });
        t.equal(refused.status, 402);
        t.match(fromB64(refused.headers.get('payment-required')).accepts[0].extra.channelState, {
          channelId: id,
          withdrawRequestedAt: initiatedAt,
          totalClaimed: String(charged),
        });

        await t.rejects(send('finalizeWithdraw', [config]), /WithdrawNotReady/, 'not before the delay');
        const rpc = (method: string, params: unknown[] = []) =>
          fetch(chain.rpcUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
          });
        await rpc('evm_increaseTime', [config.withdrawDelay]);
        await rpc('evm_mine');
        t.equal((await send('finalizeWithdraw', [config])).status, 'success');
        t.equal(
          await tokenBalance(chain, withdrawer.address),
          walletBefore - charged,
          'the payer got back its balance less what was charged',
        );
        t.same(await rail.sessions.channel(id), { balance: charged, totalClaimed: charged });

        // The watch mirrors the finalized withdrawal: the smaller balance, no withdrawal under way.
        await until(async () => (await channelRow()).withdrawRequestedAt === 0n, 'the finalized withdrawal mirrored');
        t.match(await channelRow(), { balance: charged, totalClaimed: charged, charged });
        const servedBefore = served.length;
        const next = await signVoucher(toClientEvmSigner(withdrawer), id, String(charged + 10_000n), chain.network);
        const fresh = await offer('/search?q=withdraw-after');
        const after = await sendPaid('/search?q=withdraw-after', fresh.header, fresh.requirements, {
          type: 'voucher',
          channelConfig: config,
          voucher: next,
        });
        t.equal(after.status, 402);
        // Above the balance left: the corrective 402, with the channel's state to deposit again from (D-334).
        const correction = fromB64(after.headers.get('payment-required'));
        t.equal(correction.error, 'invalid_batch_settlement_evm_cumulative_amount_mismatch');
        t.match(correction.accepts[0].extra.channelState, { balance: String(charged), chargedCumulativeAmount: String(charged) });
        t.equal(served.length, servedBefore, 'nothing forwarded');

        // The seller's wallet gets every charged cent.
        await stop!();
        const sellerBefore = await tokenBalance(chain, payTo as Address);
        const settled = await settleClaimed(db, rail);
        t.ok(settled.amount >= charged);
        t.equal(await tokenBalance(chain, payTo as Address), sellerBefore + settled.amount);
        t.equal((await channelRow()).totalSettled, charged);
        const totals = await rail.sessions.receiverTotals(payTo as Address, chain.token.address as Address);
        t.equal(totals.totalSettled, totals.totalClaimed, 'all that was claimed for the seller sent');
      });

    // One payer's channel paid through two proxies, each calling its own control-plane, both over
    // one PostgreSQL database (D-285, D-303, D-307): requests on the channel take turns across them
    // (a loser is refused, never charged twice nor forwarded), and the two control-planes' claim
    // workers running at once send one claim.
    if (provider !== 'postgresql') {
      await withdrawalRace();
      return;
    }
    const claimsAtStart = (await records('claim')).length;
    // The second control-plane (its own server and connections) and a proxy that calls only it.
    const replica = await startReplica(t, hub.cp);
    const proxyB = createProxy(
      { ...hub.cp.config, controlPlane: { ...hub.cp.config.controlPlane, url: replica.url } },
      pino({ level: 'silent' }),
      hub.cp.internalToken,
    );
    const portB = await listen(proxyB.server, 0, '127.0.0.1');
    t.teardown(() => proxyB.stop());
    const urls = [world.url, (path: string) => `http://acme.pay.localhost:${portB}${path}`];

    // A deposit of 50 calls, so every call below pays from the first one.
    const shared = new x402Client();
    shared.register(
      chain.network,
      new BatchSettlementEvmScheme(toClientEvmSigner(privateKeyToAccount(world.payerKey), reader), {
        salt: `0x${randomBytes(32).toString('hex')}` as Hex,
        depositPolicy: { depositMultiplier: 50 },
      }),
    );
    shared.setSpendControls({ allowedAssets: true });
    const payShared = wrapFetchWithPayment(fetch, shared);
    let sharedId = '';
    const sharedMirror = () => db.sessionChannel.findUniqueOrThrow({ where: { id: sharedId } });

    const opened = await payShared(urls[0]!('/search?q=deposit'));
    t.equal(opened.status, 200);
    sharedId = fromB64(opened.headers.get('payment-response')).extra.channelState.channelId;
    let chargedByReceipts = 10_000n;
    let served200 = 1;

    await t.test('a request held at the seller through one proxy makes the other’s busy, not forwarded', async (t) => {
      const atSeller = served.length + 1;
      const held = payShared(urls[0]!('/hold?q=a'));
      await until(async () => served.length >= atSeller, 'the held request at the seller');
      const servedBefore = served.length;
      const busy = await payShared(urls[1]!('/search?q=b'));
      t.equal(busy.status, 402);
      t.equal(fromB64(busy.headers.get('payment-required')).error, 'invalid_batch_settlement_evm_channel_busy');
      await busy.arrayBuffer();
      t.equal(served.length, servedBefore, 'the busy request was not forwarded');
      world.releaseHold();
      const answered = await held;
      t.equal(answered.status, 200);
      chargedByReceipts += BigInt(fromB64(answered.headers.get('payment-response')).extra.chargedAmount);
      served200++;
      t.equal((await sharedMirror()).charged, chargedByReceipts);
    });

    await t.test('calls at once over both proxies: each served one charged once, the losers refused', async (t) => {
      const servedBefore = served.length;
      const refusals = new Set<string>();
      for (const a of await callsAtOnce(payShared, urls, { rounds: 4, perRound: 6 })) {
        t.ok(a.status === 200 || a.status === 402, `answered ${a.status}`);
        if (a.refusal) refusals.add(a.refusal);
        chargedByReceipts += a.charged;
        if (a.status === 200) served200++;
      }
      t.ok(served200 > 2, `calls went through (${served200})`);
      t.ok(refusals.size > 0, `and some lost the channel: ${[...refusals].join(', ')}`);
      for (const code of refusals) t.ok(LOST_CHANNEL_REFUSALS.includes(code), `refused as busy or with the corrective 402: ${code}`);
      const channel = await sharedMirror();
      t.equal(channel.charged, chargedByReceipts, 'the channel’s charged total is the sum of the served calls’ charges');
      t.equal(BigInt(served200) * 10_000n, channel.charged, 'a cent per served call');
      t.equal(served.length - servedBefore, served200 - 2, 'the seller served only the calls that were charged');
      t.equal(channel.heldBy, null, 'the channel let go');
      const settled = await db.paymentAttempt.count({ where: { channelId: sharedId, status: 'settled', chargedMicros: { gt: 0n } } });
      t.equal(settled, served200, 'one charged attempt per served call');
    });

    await t.test('both control-planes’ claim workers at once: one claim', async (t) => {
      const railB = { ...rail, sessions: { ...rail.sessions } };
      const settler = chain.settler.address as Address;
      const nonce = await reader.getTransactionCount({ address: settler });
      const schedule = {
        claimIntervalMs: 100,
        settleIntervalMs: 3_600_000,
        claimAtMicros: 1_000_000_000n,
        withdrawWatchIntervalMs: HOUR_MS,
      };
      // Each starts with a claim round (D-307), at the same moment, then one every 100 ms.
      const stops = [startSessionLoops(db, rail, logger, schedule), startSessionLoops(replica.db, railB, logger, schedule)];
      t.teardown(() => Promise.all(stops.map((stop) => stop())));
      await until(async () => (await sharedMirror()).totalClaimed === chargedByReceipts, 'the channel claimed');
      // Rounds of each go on every 100 ms: nothing is due any more, nothing more is sent.
      const sentMore = await eventually(async () => (await reader.getTransactionCount({ address: settler })) !== nonce + 1, 500);
      t.notOk(sentMore, 'no second claim from the other control-plane');
      await Promise.all(stops.map((stop) => stop()));
      const claims = (await records('claim')).slice(claimsAtStart);
      t.same(
        claims.map((c) => [c.status, c.amount]),
        [['mined', chargedByReceipts]],
        'one claim record, for all that was charged',
      );
      t.equal(await reader.getTransactionCount({ address: settler }), nonce + 1, 'one claim transaction');

      // Two more calls, then a claim asked of both control-planes at the very same time.
      for (const url of urls) t.equal((await payShared(url('/search?q=more'))).status, 200);
      const both = await Promise.all([claimVouchers(db, rail), claimVouchers(replica.db, railB as PaymentRail)]);
      t.same(both.map((b) => b.channels).sort(), [0, 1], 'one of them claimed, the other found the network’s slot taken or nothing due');
      t.equal(await reader.getTransactionCount({ address: settler }), nonce + 2);
      t.equal((await sharedMirror()).totalClaimed, chargedByReceipts + 20_000n);
    });

    await withdrawalRace();
  });
}
