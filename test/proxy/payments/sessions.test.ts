import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import pino from 'pino';
import t from 'tap';
import { type Address, type Hex, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { PaymentRail } from '../../../control-plane/payments/rail.js';
import { claimVouchers } from '../../../control-plane/sessions/claim-vouchers.js';
import { type SessionSchedule, startSessionLoops } from '../../../control-plane/sessions/session-loops.js';
import type { SessionRail } from '../../../control-plane/sessions/session-rail.js';
import { formatUsd } from '../../../shared/money.js';
import { BATCH_SETTLEMENT_CONTRACT } from '../../../shared/payments/batch-settlement.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { chainReader, tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { until } from '../../helpers/row-locks.js';

const fromB64 = (value: string | null) => JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));
const billingOf = (res: Response) => JSON.parse(res.headers.get('hub-billing') ?? '{}');
const HOUR_MS = 3_600_000;
const channelsAbi = parseAbi(['function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)']);

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
        ['a refund', { ...good, type: 'refund' }, 'invalid_batch_settlement_evm_payload_type'],
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
  });
}
