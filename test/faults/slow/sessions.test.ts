import { randomBytes } from 'node:crypto';
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t from 'tap';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { batchSettlementAbi } from '../../../control-plane/sessions/session-rail.js';
import { BATCH_SETTLEMENT_CONTRACT } from '../../../shared/payments/batch-settlement.js';
import { chainReader, startTestChain } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startProcessWorld } from '../../helpers/process-world.js';
import { eventually } from '../../helpers/processes.js';

// x402 batch-settlement sessions with the control-plane killed (SIGKILL) between vouchers accepted
// and their claim (issue: sessions; docs/decisions.md#D-303, #D-307). `hub start control-plane`
// and `hub start proxy` run as real processes on one database, SQLite and PostgreSQL; the payer is
// x402's unmodified fetch client with its batch-settlement scheme. The claim interval is an hour and
// the size threshold out of reach, so nothing is claimed before the kill; the restarted
// control-plane claims every charge that was accepted, once.

const fromB64 = (value: string | null) => JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));

t.test('session vouchers survive a killed control-plane and are claimed once', async (t) => {
  const chain = await startTestChain(t);
  const reader = chainReader(chain);
  const settler = chain.settler.address as Address;
  const settlerNonce = () => reader.getTransactionCount({ address: settler });
  const onChain = async (channelId: Hex) => {
    const [balance, totalClaimed] = await reader.readContract({
      address: BATCH_SETTLEMENT_CONTRACT,
      abi: batchSettlementAbi,
      functionName: 'channels',
      args: [channelId],
    });
    return { balance, totalClaimed };
  };

  for (const provider of testProviders()) {
    await t.test(provider, async (t) => {
      const w = await startProcessWorld(t, provider, chain, {
        HUB_SESSIONS_CLAIM_INTERVAL_S: '3600',
        HUB_SESSIONS_SETTLE_INTERVAL_S: '3600',
        HUB_SESSIONS_CLAIM_AT_USD: '1000',
      });
      const offered = await w.api.patch(`/v1/sellers/${w.catalog.sellerId}`, w.apiKey, { x402Schemes: ['exact', 'batch-settlement'] });
      t.equal(offered.status, 200, 'the seller offers sessions through the management API');
      // A channel of its own per world (one chain for the file): a fresh salt.
      const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(privateKeyToAccount(w.payerKey), reader), {
        salt: `0x${randomBytes(32).toString('hex')}` as Hex,
      });
      const client = new x402Client();
      client.register(chain.network, scheme);
      client.setSpendControls({ allowedAssets: true });
      const pay = wrapFetchWithPayment(fetch, client);

      let channelId = '' as Hex;
      let charged = 0n;
      for (let n = 1; n <= 4; n++) {
        const res = await pay(w.payUrl(`/search?q=crash-${n}`));
        t.equal(res.status, 200, `call ${n} is served`);
        await res.arrayBuffer();
        const receipt = fromB64(res.headers.get('payment-response'));
        channelId = receipt.extra.channelState.channelId;
        charged += BigInt(receipt.extra.chargedAmount);
      }
      t.equal(charged, 40_000n, 'four calls charged a cent each');
      t.equal((await onChain(channelId)).totalClaimed, 0n, 'nothing claimed before the kill');
      t.equal(await w.db.sessionTransaction.count({ where: { kind: 'claim' } }), 0, 'no claim recorded before the kill');
      const nonce = await settlerNonce();

      await w.restartControlPlane();

      t.ok(
        await eventually(async () => (await onChain(channelId)).totalClaimed === charged, 60_000),
        'the restarted control-plane claims what was charged',
      );
      t.ok(
        await eventually(
          async () => (await w.db.sessionChannel.findUnique({ where: { id: channelId } }))?.totalClaimed === charged,
          30_000,
        ),
        'the mirror follows the claim',
      );
      const claims = await w.db.sessionTransaction.findMany({ where: { kind: 'claim' } });
      t.same(
        claims.map((c) => [c.status, c.amount, c.openKey]),
        [['mined', charged, null]],
        'one claim, for every accepted voucher’s charge',
      );
      t.match(JSON.parse(claims[0]!.itemsJson), [{ channelId, totalClaimed: String(charged), maxClaimableAmount: String(charged) }]);
      t.equal(await settlerNonce(), nonce + 1, 'one claim transaction');

      // Killed and started again once more: the new control-plane's first round finds nothing due.
      await w.restartControlPlane();
      const moved = await eventually(async () => (await settlerNonce()) !== nonce + 1, 2_000);
      t.notOk(moved, 'no second claim transaction');
      t.equal(await w.db.sessionTransaction.count({ where: { kind: 'claim' } }), 1);
      t.equal((await onChain(channelId)).totalClaimed, charged, 'claimed exactly what was charged, once');

      // The payer's channel goes on after the restarts: the next voucher is taken at hub's count.
      const next = await pay(w.payUrl('/search?q=after-restart'));
      t.equal(next.status, 200);
      t.equal(fromB64(next.headers.get('payment-response')).extra.channelState.chargedCumulativeAmount, String(charged + 10_000n));
    });
  }
});
