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
import { startProcessWorld } from '../../helpers/process-world.js';
import { eventually } from '../../helpers/processes.js';
import { callsAtOnce, LOST_CHANNEL_REFUSALS } from '../../helpers/session-calls.js';

// One payer's x402 batch-settlement channel paid through two replicas of hub, each a
// `hub start control-plane` and a `hub start proxy` calling only it, as real processes over one
// PostgreSQL database (issue: sessions; docs/decisions.md#D-285, #D-303). Calls on the channel take
// turns across the processes: a loser is refused as busy or with the corrective 402, never charged
// twice nor forwarded; both control-planes' claim workers run every second, and each charge is
// claimed once, in transactions that never overlap. On SQLite one control-plane serves a database
// (the in-process test covers its turns), so this runs on PostgreSQL only, when one is configured.

const fromB64 = (value: string | null) => JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));
const CENT = 10_000n;

const skip = process.env.HUB_TEST_PG_URL ? false : 'no PostgreSQL configured';

t.test('one channel through two replicas run as processes', { skip }, async (t) => {
  const chain = await startTestChain(t);
  const reader = chainReader(chain);
  const settler = chain.settler.address as Address;
  const w = await startProcessWorld(t, 'postgresql', chain, {
    HUB_SESSIONS_CLAIM_INTERVAL_S: '1',
    HUB_SESSIONS_SETTLE_INTERVAL_S: '3600',
    HUB_SESSIONS_CLAIM_AT_USD: '1000',
  });
  const offered = await w.api.patch(`/v1/sellers/${w.catalog.sellerId}`, w.apiKey, { x402Schemes: ['exact', 'batch-settlement'] });
  t.equal(offered.status, 200, 'the seller offers sessions through the management API');
  const replica = await w.startReplica();
  const urls = [w.payUrl, replica.payUrl];

  // A deposit of 50 calls, so every call below pays from it.
  const client = new x402Client();
  client.register(
    chain.network,
    new BatchSettlementEvmScheme(toClientEvmSigner(privateKeyToAccount(w.payerKey), reader), {
      salt: `0x${randomBytes(32).toString('hex')}` as Hex,
      depositPolicy: { depositMultiplier: 50 },
    }),
  );
  client.setSpendControls({ allowedAssets: true });
  const pay = wrapFetchWithPayment(fetch, client);
  const nonceAtStart = await reader.getTransactionCount({ address: settler });

  const opened = await pay(urls[1]!('/search?q=deposit'));
  t.equal(opened.status, 200, 'the deposit is taken through the replica');
  await opened.arrayBuffer();
  const channelId = fromB64(opened.headers.get('payment-response')).extra.channelState.channelId as Hex;
  let chargedByReceipts = CENT;
  let served200 = 1;

  // A call held at the seller through one replica: the other's call on the channel is busy.
  const atSeller = w.served.length + 1;
  const held = pay(urls[0]!('/hold?q=held'));
  t.ok(await eventually(async () => w.served.length >= atSeller, 60_000), 'the held call reached the seller');
  const servedBefore = w.served.length;
  const busy = await pay(urls[1]!('/search?q=busy'));
  t.equal(busy.status, 402);
  t.equal(fromB64(busy.headers.get('payment-required')).error, 'invalid_batch_settlement_evm_channel_busy', 'refused as busy');
  await busy.arrayBuffer();
  t.equal(w.served.length, servedBefore, 'the busy call was not forwarded');
  w.releaseHold();
  const answered = await held;
  t.equal(answered.status, 200, 'the held call is served');
  await answered.arrayBuffer();
  chargedByReceipts += BigInt(fromB64(answered.headers.get('payment-response')).extra.chargedAmount);
  served200++;

  // Calls at once over both replicas, while both claim workers run.
  const refusals = new Set<string>();
  const servedBeforeRounds = w.served.length;
  let served200InRounds = 0;
  for (const a of await callsAtOnce(pay, urls, { rounds: 4, perRound: 6 })) {
    t.ok(a.status === 200 || a.status === 402, `answered ${a.status}`);
    if (a.refusal) refusals.add(a.refusal);
    chargedByReceipts += a.charged;
    if (a.status === 200) served200InRounds++;
  }
  served200 += served200InRounds;
  t.ok(served200InRounds > 0, `calls went through (${served200InRounds} of 24)`);
  for (const code of refusals) t.ok(LOST_CHANNEL_REFUSALS.includes(code), `a loser is refused as busy or with the corrective 402: ${code}`);
  t.equal(w.served.length - servedBeforeRounds, served200InRounds, 'the seller served only the calls that were charged');
  t.equal(chargedByReceipts, BigInt(served200) * CENT, 'a cent per served call, by the receipts');

  const mirror = () => w.db.sessionChannel.findUniqueOrThrow({ where: { id: channelId } });
  t.equal((await mirror()).charged, chargedByReceipts, 'the channel’s charged total is the sum of the served calls’ charges');
  const onChain = async () =>
    (
      await reader.readContract({
        address: BATCH_SETTLEMENT_CONTRACT,
        abi: batchSettlementAbi,
        functionName: 'channels',
        args: [channelId],
      })
    )[1];
  t.ok(await eventually(async () => (await onChain()) === chargedByReceipts, 60_000), 'the chain’s claimed total reaches the charges');
  t.ok(
    await eventually(
      async () => (await w.db.sessionTransaction.count({ where: { kind: 'claim', status: { not: 'mined' } } })) === 0,
      30_000,
    ),
    'every claim recorded is followed to its end',
  );
  const claims = await w.db.sessionTransaction.findMany({ where: { kind: 'claim' }, orderBy: { createdAt: 'asc' } });
  t.ok(claims.length >= 1, `claims were sent (${claims.length})`);
  t.same(
    claims.map((c) => c.status),
    claims.map(() => 'mined'),
    'each claim mined',
  );
  t.equal(
    claims.reduce((sum, c) => sum + c.amount, 0n),
    chargedByReceipts,
    'the claims add up to the charges: none claimed twice',
  );
  // The settler sent the deposit and each claim, nothing else.
  t.equal(await reader.getTransactionCount({ address: settler }), nonceAtStart + 1 + claims.length, 'one transaction per claim record');
  t.equal((await mirror()).totalClaimed, chargedByReceipts, 'the mirror follows the chain');
});
