import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t from 'tap';
import { type Address, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
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
  });
}
