import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t from 'tap';
import { type Address, getAddress, type Hex, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { HttpFacilitator } from '../../../control-plane/facilitator/http-facilitator.js';
import { type PaymentRail, remoteRail } from '../../../control-plane/payments/rail.js';
import type { ChannelConfig } from '../../../control-plane/sessions/channel-digests.js';
import { claimVouchers } from '../../../control-plane/sessions/claim-vouchers.js';
import { batchSettlementAbi, type SessionRail } from '../../../control-plane/sessions/session-rail.js';
import { settleClaimed } from '../../../control-plane/sessions/settle-claimed.js';
import { BATCH_SETTLEMENT_CONTRACT } from '../../../shared/payments/batch-settlement.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { chainReader, chainWallet, tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { type Answer, remoteSessionsSettings, startX402SessionsFacilitatorServer } from '../../helpers/facilitator-server.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { freePort } from '../../helpers/processes.js';

// Sessions on a rail whose facilitator is remote (docs/decisions.md#D-340): x402's own facilitator
// with their batch-settlement scheme, over HTTP, on anvil with hub's contract at x402's address.
// The unmodified x402 client pays hub; hub checks vouchers itself and sends deposits, claims,
// settles and refunds through the facilitator, which sends them from its own account; hub's key
// only signs as the channels' receiver authorizer.

t.setTimeout(180_000);

const fromB64 = (value: string | null) => JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));
const channelsAbi = parseAbi(['function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)']);

type Seen = { route: string; type: string | undefined; payload: Record<string, unknown> | undefined };

for (const provider of testProviders()) {
  t.test(`batch-settlement sessions through a remote facilitator on ${provider}`, async (t) => {
    /** What the facilitator was asked, in order; `outage` answers its settles instead while set. */
    const seen: Seen[] = [];
    let outage: Answer | ((payload: Record<string, unknown>) => Promise<Answer>) | undefined;
    const world = await startPaidWorld(t, provider, {
      escrow: false,
      rail: async (chain) => {
        const url = await startX402SessionsFacilitatorServer(t, chain, (route, body) => {
          const payload = (body as { paymentPayload?: { payload?: Record<string, unknown> } } | undefined)?.paymentPayload?.payload;
          seen.push({ route, type: payload?.type as string | undefined, payload });
          if (route !== 'settle') return undefined;
          return typeof outage === 'function' ? outage(payload ?? {}) : outage;
        });
        const rail = remoteRail(remoteSessionsSettings(chain, url), 'live');
        t.teardown(() => (rail.facilitator as HttpFacilitator).close());
        return rail;
      },
    });
    const { api, chain, db, hub, payTo, sellerId, served, url } = world;
    const rail = world.rail as PaymentRail & { sessions: SessionRail };
    const reader = chainReader(chain);
    const authorizer = privateKeyToAccount(chain.accounts[5]!.privateKey as Hex).address;
    const readChannel = async (id: string) => {
      const [balance, totalClaimed] = await reader.readContract({
        address: BATCH_SETTLEMENT_CONTRACT,
        abi: channelsAbi,
        functionName: 'channels',
        args: [id as Hex],
      });
      return { balance, totalClaimed };
    };
    const settles = (type: string) => seen.filter((s) => s.route === 'settle' && s.type === type);
    /** An unmodified x402 client paying with batch-settlement only, as `key`'s owner. */
    const sessionClient = (key: Hex) => {
      const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(privateKeyToAccount(key), reader));
      const client = new x402Client();
      client.register(chain.network, scheme);
      client.setSpendControls({ allowedAssets: true });
      return { scheme, pay: wrapFetchWithPayment(fetch, client) };
    };
    t.equal((await api.patch(`/v1/sellers/${sellerId}`, hub.apiKey, { x402Schemes: ['exact', 'batch-settlement'] })).status, 200);

    await t.test('the 402 offers batch-settlement on the rail, hub’s key its receiver authorizer', async (t) => {
      const supported = await (rail.facilitator as HttpFacilitator).supported();
      t.ok(
        supported.kinds.some((k) => k.scheme === 'batch-settlement' && k.network === chain.network && !k.extra?.receiverAuthorizer),
        'the facilitator takes the scheme, with no authorizer of its own',
      );
      const res = await fetch(url('/search?q=offer'));
      t.equal(res.status, 402);
      const { accepts } = (await res.json()) as { accepts: PaymentRequirements[] };
      t.same(
        accepts.map((a) => a.scheme),
        ['exact', 'batch-settlement'],
      );
      t.match(accepts[1], {
        network: chain.network,
        payTo: getAddress(payTo),
        extra: { receiverAuthorizer: authorizer, withdrawDelay: 86_400 },
      });
    });

    const payer = privateKeyToAccount(chain.accounts[3]!.privateKey as Hex);
    const { scheme, pay } = sessionClient(chain.accounts[3]!.privateKey as Hex);
    const walletBefore = await tokenBalance(chain, payer.address);
    let channelId = '';
    // The seller's `/zero` asks for a call and reports none used: its voucher authorizes 0.01, and nothing is charged.
    const calls = [
      { path: '/search?q=1', charged: 10_000 },
      { path: '/zero?q=2', charged: 0 },
      { path: '/search?q=3', charged: 10_000 },
      { path: '/zero?q=4', charged: 0 },
    ];

    await t.test('the deposit goes through the facilitator; vouchers are checked in hub alone', async (t) => {
      const res = await pay(url(calls[0]!.path));
      t.equal(res.status, 200, await res.clone().text());
      const receipt = fromB64(res.headers.get('payment-response'));
      t.match(receipt, { success: true, network: chain.network, amount: '50000', extra: { chargedAmount: '10000' } });
      channelId = receipt.extra.channelState.channelId;
      const mined = await reader.getTransactionReceipt({ hash: receipt.transaction });
      t.equal(mined.status, 'success');
      t.equal(getAddress(mined.from), getAddress(chain.settler.address), 'sent (and its gas paid) by the facilitator’s account');
      t.same(await readChannel(channelId), { balance: 50_000n, totalClaimed: 0n });
      t.equal(await tokenBalance(chain, payer.address), walletBefore - 50_000n);
      t.equal(settles('deposit').length, 1);

      const asked = seen.length;
      const block = await reader.getBlockNumber();
      let cumulative = 10_000;
      for (const call of calls.slice(1)) {
        const voucherCall = await pay(url(call.path));
        t.equal(voucherCall.status, 200);
        cumulative += call.charged;
        const answer = fromB64(voucherCall.headers.get('payment-response'));
        t.match(answer, { success: true, transaction: '', extra: { chargedAmount: String(call.charged) } });
        t.equal(answer.extra.channelState.chargedCumulativeAmount, String(cumulative), `${call.path}: charged what was used`);
      }
      t.equal(seen.length, asked, 'the facilitator was not asked about a voucher');
      t.equal(await reader.getBlockNumber(), block, 'nothing on chain for a voucher');
      // The last voucher's ceiling is above what was used: what was charged before it, and its price.
      t.match(await db.sessionChannel.findUniqueOrThrow({ where: { id: channelId } }), {
        charged: 20_000n,
        signedMaxClaimable: 30_000n,
        balance: 50_000n,
      });
    });

    await t.test('a claim through the facilitator: the chain’s claimed total is what hub charged', async (t) => {
      const claimed = await claimVouchers(db, rail);
      t.equal(claimed.channels, 1);
      const charges = await db.sessionCharge.findMany({ where: { channelId } });
      const charged = charges.reduce((sum, c) => sum + c.chargedMicros, 0n);
      t.equal(charged, 20_000n);
      t.same(await readChannel(channelId), { balance: 50_000n, totalClaimed: charged });
      const [claim] = settles('claim');
      t.ok(claim?.payload?.claimAuthorizerSignature, 'hub signed the batch as receiver authorizer');
      t.match(claim?.payload?.claims, [{ totalClaimed: '20000', voucher: { maxClaimableAmount: '30000' } }]);
      const mined = await reader.getTransactionReceipt({ hash: claimed.transaction! });
      t.equal(getAddress(mined.from), getAddress(chain.settler.address), 'sent by the facilitator');
      t.match(await db.sessionTransaction.findFirstOrThrow({ where: { kind: 'claim' } }), {
        status: 'mined',
        amount: 20_000n,
        transaction: claimed.transaction,
      });
      t.match(await db.sessionChannel.findUniqueOrThrow({ where: { id: channelId } }), { totalClaimed: 20_000n });
      t.same(await claimVouchers(db, rail), { channels: 0 }, 'nothing left to claim');
    });

    await t.test('settle through the facilitator: the claimed funds reach the seller’s wallet', async (t) => {
      const before = await tokenBalance(chain, payTo as Address);
      t.same(await settleClaimed(db, rail), { receivers: 1, amount: 20_000n });
      t.equal(await tokenBalance(chain, payTo as Address), before + 20_000n);
      t.equal(settles('settle').length, 1);
      t.match(await db.sessionChannel.findUniqueOrThrow({ where: { id: channelId } }), { totalSettled: 20_000n });
    });

    const second = privateKeyToAccount(chain.accounts[4]!.privateKey as Hex);
    const client = sessionClient(chain.accounts[4]!.privateKey as Hex);
    let secondId = '';

    await t.test('a failing facilitator: 503 with the reason, nothing forwarded or charged', async (t) => {
      const walletBefore = await tokenBalance(chain, second.address);
      const servedBefore = served.length;
      const attemptsBefore = await db.paymentAttempt.count({ where: { status: 'settled' } });

      outage = { status: 502, body: 'bad gateway', raw: true };
      const failed = await client.pay(url('/search?q=outage'));
      t.equal(failed.status, 503);
      t.match(await failed.json(), {
        error: 'service_unavailable',
        reason: /facilitator did not take the deposit.*502.*Nothing was charged/,
      });
      outage = undefined;

      // Unreachable after the 402: the same rail's sessions through a facilitator nobody listens for
      // (the 402 offered them while the facilitator answered; one never heard from is not offered, D-361).
      const live = rail.sessions;
      const nowhere = remoteRail(remoteSessionsSettings(chain, `http://127.0.0.1:${await freePort()}`), 'live');
      t.teardown(() => (nowhere.facilitator as HttpFacilitator).close());
      rail.sessions = { ...nowhere.sessions!, offered: live.offered };
      const unreachable = await client.pay(url('/search?q=unreachable'));
      rail.sessions = live;
      t.equal(unreachable.status, 503);
      t.match(await unreachable.json(), { error: 'service_unavailable', reason: /facilitator did not take the deposit.*ECONNREFUSED/ });

      t.equal(served.length, servedBefore, 'the seller was not called');
      t.equal(await tokenBalance(chain, second.address), walletBefore, 'no deposit left the payer');
      t.equal(await db.paymentAttempt.count({ where: { status: 'settled' } }), attemptsBefore, 'nothing charged');

      // Back up: the same client pays, deposits, and its charge waits to be claimed.
      const paid = await client.pay(url('/search?q=back'));
      t.equal(paid.status, 200, await paid.clone().text());
      const id = fromB64(paid.headers.get('payment-response')).extra.channelState.channelId;
      secondId = id;
      t.equal(await tokenBalance(chain, second.address), walletBefore - 50_000n);

      // A claim round while the facilitator cannot be reached sends nothing and fails its record; the next claims.
      await t.rejects(claimVouchers(db, nowhere), /ECONNREFUSED/);
      t.match(await db.sessionTransaction.findFirstOrThrow({ where: { kind: 'claim' }, orderBy: { createdAt: 'desc' } }), {
        status: 'failed',
        openKey: null,
      });
      t.same(await readChannel(id), { balance: 50_000n, totalClaimed: 0n });
      t.equal((await claimVouchers(db, rail)).channels, 1);
      t.same(await readChannel(id), { balance: 50_000n, totalClaimed: 10_000n });
    });

    await t.test('a cooperative refund through the facilitator, signed by hub', async (t) => {
      const before = await tokenBalance(chain, payer.address);
      const refunded = await scheme.refund(url('/search?q=refund'));
      t.match(refunded, { success: true, network: chain.network, amount: '30000' });
      t.equal(await tokenBalance(chain, payer.address), before + 30_000n, 'the payer got back what was not charged');
      t.same(await readChannel(channelId), { balance: 20_000n, totalClaimed: 20_000n });
      const [refund] = settles('refund');
      t.ok(refund?.payload?.refundAuthorizerSignature, 'hub signed the refund as receiver authorizer');
      t.equal(await rail.sessions.refundNonce(channelId as Hex), 1n);
      t.match(await db.sessionChannel.findUniqueOrThrow({ where: { id: channelId } }), { balance: 20_000n, refundNonce: 1 });
    });

    await t.test('a refund with charges not claimed yet: claimed and refunded in one transaction, both signed by hub', async (t) => {
      const more = await client.pay(url('/search?q=more'));
      t.equal(more.status, 200);
      t.same(await readChannel(secondId), { balance: 50_000n, totalClaimed: 10_000n }, 'one charge claimed, one not');
      const before = await tokenBalance(chain, second.address);
      const refunded = await client.scheme.refund(url('/search?q=refund-second'));
      t.match(refunded, { success: true, amount: '30000' });
      t.equal(await tokenBalance(chain, second.address), before + 30_000n);
      t.same(await readChannel(secondId), { balance: 20_000n, totalClaimed: 20_000n }, 'what was charged is the seller’s');
      const refund = settles('refund').at(-1);
      t.ok(refund?.payload?.claimAuthorizerSignature && refund.payload.refundAuthorizerSignature);
      t.match(refund?.payload?.claims, [{ totalClaimed: '20000' }]);
      t.same(
        await rail.sessions.withdrawals([secondId as Hex]),
        [{ balance: 20_000n, withdrawRequestedAt: 0 }],
        'the watch reads the chain',
      );
    });

    await t.test('a refund that landed though the facilitator answered it failed: applied as mined', async (t) => {
      // The second payer's channel again: more calls, deposited for anew, and claimed so its refund is the refund alone.
      for (const q of ['again-1', 'again-2']) t.equal((await client.pay(url(`/search?q=${q}`))).status, 200);
      await claimVouchers(db, rail);
      const before = await readChannel(secondId);
      const row = await db.sessionChannel.findUniqueOrThrow({ where: { id: secondId } });
      t.equal(before.totalClaimed, row.charged, 'all charged is claimed');
      const refundable = before.balance - row.charged;
      t.ok(refundable > 0n);
      const walletBefore = await tokenBalance(chain, second.address);

      // The facilitator sends the refund and loses the chain's answer: `success: false`, no hash (x402's answer then).
      const sender = chainWallet(chain, chain.accounts[0]!.privateKey as Hex);
      outage = async (payload) => {
        const config = payload.channelConfig as ChannelConfig;
        const hash = await sender.writeContract({
          address: BATCH_SETTLEMENT_CONTRACT,
          abi: batchSettlementAbi,
          functionName: 'refundWithSignature',
          args: [config, BigInt(payload.amount as string), BigInt(payload.refundNonce as string), payload.refundAuthorizerSignature as Hex],
        });
        t.equal((await reader.waitForTransactionReceipt({ hash })).status, 'success', 'the refund landed');
        return {
          status: 200,
          body: {
            success: false,
            errorReason: 'invalid_batch_settlement_evm_refund_transaction_failed',
            transaction: '',
            network: chain.network,
          },
        };
      };
      const refunded = await client.scheme.refund(url('/search?q=refund-lost-answer')).finally(() => {
        outage = undefined;
      });
      t.match(refunded, { success: true, amount: String(refundable) });
      t.equal(await tokenBalance(chain, second.address), walletBefore + refundable, 'refunded once');
      t.same(await readChannel(secondId), { balance: row.charged, totalClaimed: row.charged });
      t.match(await db.sessionChannel.findUniqueOrThrow({ where: { id: secondId } }), {
        balance: row.charged,
        refundNonce: row.refundNonce + 1,
        heldBy: null,
      });
      t.match(await db.sessionTransaction.findFirstOrThrow({ where: { kind: 'refund' }, orderBy: { createdAt: 'desc' } }), {
        status: 'mined',
        openKey: null,
      });
      t.match(await db.paymentAttempt.findFirstOrThrow({ where: { channelId: secondId }, orderBy: { createdAt: 'desc' } }), {
        status: 'released',
        chargedMicros: 0n,
        settlementReason: 'session_refund',
      });
    });
  });
}

t.test('a remote rail takes sessions with a receiver authorizer key and an RPC URL', async (t) => {
  const key = `0x${'22'.repeat(32)}`;
  const base = {
    HUB_FACILITATOR_URL: 'http://127.0.0.1:9',
    HUB_PAYMENT_NETWORK: 'eip155:31337',
    HUB_PAYMENT_TOKEN_ADDRESS: `0x${'11'.repeat(20)}`,
  };
  const railOf = (env: Record<string, string>, which: 'live' | 'test' = 'live') => {
    const rail = remoteRail(env, which);
    t.teardown(() => (rail.facilitator as HttpFacilitator).close());
    return rail;
  };
  t.equal(railOf({ ...base, HUB_PAYMENT_RPC_URL: 'http://127.0.0.1:9' }).sessions, undefined, 'without the key: exact only');
  t.throws(
    () => remoteRail({ ...base, HUB_PAYMENT_RECEIVER_AUTHORIZER_KEY: key }, 'live'),
    /RECEIVER_AUTHORIZER_KEY needs HUB_PAYMENT_RPC_URL/,
  );
  t.throws(
    () => remoteRail({ ...base, HUB_PAYMENT_RPC_URL: 'http://127.0.0.1:9', HUB_PAYMENT_RECEIVER_AUTHORIZER_KEY: 'secret' }, 'live'),
    /must be a private key/,
  );
  const live = railOf({ ...base, HUB_PAYMENT_RPC_URL: 'http://127.0.0.1:9', HUB_PAYMENT_RECEIVER_AUTHORIZER_KEY: key });
  t.match(live.sessions, { receiverAuthorizer: privateKeyToAccount(key as Hex).address, withdrawDelay: 86_400 });
  const test = railOf(
    {
      HUB_TEST_FACILITATOR_URL: 'http://127.0.0.1:9',
      HUB_TEST_PAYMENT_NETWORK: 'eip155:84532',
      HUB_TEST_PAYMENT_TOKEN_ADDRESS: `0x${'11'.repeat(20)}`,
      HUB_TEST_PAYMENT_RPC_URL: 'http://127.0.0.1:9',
      HUB_TEST_PAYMENT_RECEIVER_AUTHORIZER_KEY: key,
    },
    'test',
  );
  t.ok(test.sessions, 'the test rail’s twin settings');
});
