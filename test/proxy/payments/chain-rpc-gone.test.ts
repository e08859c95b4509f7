import t from 'tap';
import { LocalFacilitator } from '../../../control-plane/facilitator/local-facilitator.js';
import { localRail } from '../../../control-plane/payments/rail.js';
import { finishPendingSettlements } from '../../../control-plane/payments/settlement/pending.js';
import { tokenBalance } from '../../helpers/chain.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { startRpcFaultProxy } from '../../helpers/rpc-fault-proxy.js';
import { x402Fetch } from '../../helpers/x402-agent.js';

// The chain's RPC gone, for real: hub's settler reaches the chain through a JSON-RPC relay that
// stops passing requests on. Before the claim, the payer is told to come back (503), and nothing is
// forwarded; after the call was forwarded, its settlement waits (`settling`) and the pending loop
// pays it once the chain answers again, once.

t.test('the chain’s RPC gone: nothing forwarded unpaid, nothing paid twice', async (t) => {
  const world = await startPaidWorld(t, 'sqlite');
  const { chain, rail, db, payTo, payerKey, url, served } = world;
  const relay = await startRpcFaultProxy(t, chain.rpcUrl);
  // The world's own rail, its facilitator now reaching the chain through the relay.
  const through = localRail({ ...chain, rpcUrl: relay.url });
  Object.assign(rail, { facilitator: through.facilitator, escrow: through.escrow });
  const facilitator = through.facilitator;
  if (facilitator instanceof LocalFacilitator) t.teardown(() => facilitator.close());
  const pay = x402Fetch(payerKey);
  const reads = ['eth_call', 'eth_getBalance', 'eth_getTransactionCount', 'eth_estimateGas', 'eth_getLogs', 'eth_blockNumber'];
  const sends = ['eth_sendRawTransaction', 'eth_sendRawTransactionSync', 'eth_getTransactionReceipt'];
  const before = await tokenBalance(chain, payTo);

  await t.test('gone before the claim: 503 with when to retry, the seller not called', async (t) => {
    for (const method of [...reads, ...sends]) relay.faults.set(method, 'drop');
    const seen = served.length;
    const res = await pay(url('/search?q=before'));
    t.equal(res.status, 503);
    t.match(await res.json(), { error: 'service_unavailable' });
    t.equal(served.length, seen, 'nothing forwarded');
    relay.faults.clear();
  });

  await t.test('gone after the call was forwarded: settling, then paid once by the pending loop', async (t) => {
    for (const method of sends) relay.faults.set(method, 'drop');
    const res = await pay(url('/search?q=after'));
    t.equal(res.status, 200, 'the agent has what it paid for');
    t.match(JSON.parse(res.headers.get('hub-billing') ?? '{}'), { status: 'settling' });
    await res.arrayBuffer();
    const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=after' } });
    t.equal(attempt.status, 'settling');
    t.equal(await tokenBalance(chain, payTo), before, 'nothing moved yet');

    relay.faults.clear();
    t.equal(await finishPendingSettlements(db, { live: rail }, 0), 1, 'the chain is back: the loop settles it');
    t.equal((await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } })).status, 'settled');
    t.equal(await finishPendingSettlements(db, { live: rail }, 0), 0, 'and has nothing more to do');
    t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'paid once');
  });
});
