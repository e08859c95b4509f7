import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t from 'tap';
import { type Address, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { claimVouchers } from '../../../control-plane/sessions/claim-vouchers.js';
import { BATCH_SETTLEMENT_CONTRACT } from '../../../shared/payments/batch-settlement.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { chainReader, tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';

const fromB64 = (value: string | null) => JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));
const billingOf = (res: Response) => JSON.parse(res.headers.get('hub-billing') ?? '{}');
const channelsAbi = parseAbi(['function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)']);

for (const provider of testProviders()) {
  t.test(`x402 batch-settlement sessions on ${provider}`, async (t) => {
    const world = await startPaidWorld(t, provider);
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
  });
}
