import t from 'tap';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { chainControls, startTestChain, tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startProcessWorld } from '../../helpers/process-world.js';
import { eventually } from '../../helpers/processes.js';
import { signPayment } from '../../helpers/sign-payment.js';
import { x402Fetch } from '../../helpers/x402-agent.js';

// A paid call, and the usage reports beside it, with a process killed (SIGKILL) at chosen points
// and started again (issue: crashes and faults). The control-plane and the proxy run as real
// `hub start` processes on one database, SQLite and PostgreSQL; each point is reached by watching
// real state, not by a hook: the seller holding the paid request, the settlement's transaction
// waiting in the chain's pool (automine off), a report under way. Money moves once or not at all,
// the seller is called once, usage is counted once.

t.test('a paid call and its usage survive a killed process', async (t) => {
  // One chain for the file (D-272): each world below settles on it in turn, its balances read as deltas.
  const chain = await startTestChain(t);
  const controls = chainControls(t, chain);

  for (const provider of testProviders()) {
    await t.test(provider, async (t) => {
      const w = await startProcessWorld(t, provider, chain);
      const pay = x402Fetch(w.payerKey);
      const balances = async () => ({ payee: await tokenBalance(chain, w.payTo), payer: await tokenBalance(chain, w.payer) });
      const attemptOf = (pathAndQuery: string) => w.db.paymentAttempt.findFirst({ where: { pathAndQuery } });

      await t.test('the control-plane killed while the seller holds a paid call: answered, paid once', async (t) => {
        const before = await balances();
        const served = w.served.length;
        const call = pay(w.payUrl('/hold?point=cp'));
        t.ok(await eventually(() => w.served.length > served, 60_000), 'the seller holds the paid call');
        await w.restartControlPlane();
        w.releaseHold();
        const res = await call;
        t.equal(res.status, 200, 'the agent has what it paid for');
        await res.arrayBuffer();
        t.ok(await eventually(async () => (await attemptOf('/hold?point=cp'))?.status === 'settled', 60_000), 'settled');
        t.same(await balances(), { payee: before.payee + 10_000n, payer: before.payer - 10_000n }, 'one cent moved, once');
        t.equal(w.served.length, served + 1, 'the seller was called once');
      });

      await t.test('the control-plane killed while usage reports are under way: each counted once when sent again', async (t) => {
        // The seller reports the usage of a paid call while it serves it (reports are taken while
        // the payment is in flight), each report with an idempotency key; none beyond what was paid.
        const served = w.served.length;
        const call = pay(w.payUrl('/hold?point=usage'));
        t.ok(await eventually(() => w.served.length > served, 60_000), 'the seller holds the paid call');
        const zcRequestId = w.served.at(-1)!;
        const keys = Array.from({ length: 60 }, (_, i) => `crash-report-${i}`);
        const report = (idempotencyKey: string) =>
          w.api.post('/v1/usage', w.apiKey, {
            idempotencyKey,
            zcRequestId,
            serviceSlug: 'search',
            usage: [{ meterSlug: 'calls', quantity: 0 }],
          });
        const answers = new Map<string, number | 'lost'>();
        let next = 0;
        const reporter = async () => {
          for (let key = keys[next++]; key; key = keys[next++]) {
            const status = await report(key).then(
              (reply) => reply.status,
              () => 'lost' as const,
            );
            answers.set(key, status);
            if (status === 'lost') return;
          }
        };
        const reporters = Array.from({ length: 6 }, reporter);
        t.ok(await eventually(() => [...answers.values()].filter((s) => s === 200).length >= 10, 60_000), 'reports are being recorded');
        await w.restartControlPlane(() => Promise.all(reporters));
        const acknowledged = keys.filter((key) => answers.get(key) === 200);
        t.ok(acknowledged.length < keys.length, `the kill came mid-flight: ${acknowledged.length} of ${keys.length} acknowledged`);

        const again = await Promise.all(keys.map(report));
        t.same(new Set(again.map((reply) => reply.status)), new Set([200]), 'every report sent again is taken');
        t.same(
          acknowledged.filter((key) => again[keys.indexOf(key)]!.body.duplicate !== true),
          [],
          'one acknowledged before the kill is known as a duplicate',
        );
        t.equal(
          await w.db.usageEvent.count({ where: { requestId: zcRequestId, idempotencyKey: { in: keys } } }),
          keys.length,
          'one event per key: none lost, none doubled',
        );
        w.releaseHold();
        const res = await call;
        t.equal(res.status, 200, 'and the paid call is answered');
        await res.arrayBuffer();
      });

      await t.test('the proxy killed while the seller holds a paid call: nothing charged, nothing forwarded again', async (t) => {
        const before = await balances();
        const served = w.served.length;
        // Paid by hand, so the same payment can be sent again after the restart.
        const challenge = await fetch(w.payUrl('/hold?point=proxy'));
        t.equal(challenge.status, 402);
        const requirements = ((await challenge.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
        const payment = Buffer.from(JSON.stringify(await signPayment(chain, w.payerKey, requirements))).toString('base64');
        const paid = () => fetch(w.payUrl('/hold?point=proxy'), { headers: { 'payment-signature': payment } });
        const call = paid().catch(() => 'cut' as const);
        t.ok(await eventually(() => w.served.length > served, 60_000), 'the seller holds the paid call');
        await w.restartProxy(async () => t.equal(await call, 'cut', 'the agent’s connection went with the proxy'));
        w.releaseHold();
        const attempt = await attemptOf('/hold?point=proxy');
        t.equal(attempt?.status, 'in_flight', 'the claim stays in flight, unsettled: the agent never had its answer');

        const again = await paid();
        t.not(again.status, 200, `the same payment sent again is not served again (${again.status})`);
        await again.arrayBuffer();
        t.equal(w.served.length, served + 1, 'the seller was called once');
        t.same(await balances(), before, 'and no money moved');
      });

      await t.test('the control-plane killed while its settlement waits in the chain’s pool: paid once after the restart', async (t) => {
        const before = await balances();
        await controls.automine(false);
        const call = pay(w.payUrl('/search?point=pool')).then(
          async (res) => ({ status: res.status, billing: res.headers.get('hub-billing'), body: await res.text() }),
          () => 'cut' as const,
        );
        t.ok(await eventually(async () => (await controls.pending()) > 0, 60_000), 'the settlement’s transaction is in the pool');
        // Mined while the control-plane is down: the restarted one finds the transfer on chain. (Still
        // in the pool when the restarted one looks, it stays settling until mined: docs/decisions.md#D-275.)
        await w.restartControlPlane(async () => {
          await controls.mine();
          await controls.automine(true);
        });
        const answer = await call;
        t.match(answer, { status: 200, billing: /settling/ }, 'the agent has its answer, marked settling');
        t.ok(
          await eventually(async () => (await attemptOf('/search?point=pool'))?.status === 'settled', 60_000),
          'the restarted control-plane records it settled',
        );
        t.same(await balances(), { payee: before.payee + 10_000n, payer: before.payer - 10_000n }, 'one cent moved, once');
        // The pending loop passes every 200 ms here: a second payment would show within a second.
        const moved = await eventually(async () => (await tokenBalance(chain, w.payTo)) !== before.payee + 10_000n, 1_000);
        t.notOk(moved, 'and nothing more moves after it');
      });

      await t.test(
        'the control-plane killed and back while its settlement is still in the pool: settling until mined, then paid once',
        async (t) => {
          const before = await balances();
          await controls.automine(false);
          const call = pay(w.payUrl('/search?point=pool-at-restart')).then(
            async (res) => ({ status: res.status, billing: res.headers.get('hub-billing') }),
            () => 'cut' as const,
          );
          t.ok(await eventually(async () => (await controls.pending()) > 0, 60_000), 'the settlement’s transaction is in the pool');
          await w.restartControlPlane();
          t.match(await call, { status: 200, billing: /settling/ }, 'the agent has its answer, marked settling');
          // The restarted control-plane settles again what is 10 s in `settling` (pending.ts), on
          // every pass (200 ms here): past that age, it has looked at the payment several times while
          // its transaction still waited in the pool.
          const { verifiedAt } = (await attemptOf('/search?point=pool-at-restart'))!;
          const lookedAt = verifiedAt!.getTime() + 10_000 + 2_000;
          t.ok(await eventually(() => Date.now() > lookedAt, 60_000));
          t.equal(await controls.pending(), 1, 'the one transaction is still in the pool, none sent beside it');
          t.equal((await attemptOf('/search?point=pool-at-restart'))?.status, 'settling', 'not recorded failed: still settling');
          await controls.mine();
          await controls.automine(true);
          const settled = await eventually(async () => (await attemptOf('/search?point=pool-at-restart'))?.status === 'settled', 60_000);
          // Failed once in a loaded run, not since: should it again, what hub recorded and logged says why.
          const diagnostics = settled
            ? {}
            : {
                attempts: await w.db.paymentAttempt.findMany({
                  where: { pathAndQuery: '/search?point=pool-at-restart' },
                  select: { id: true, status: true, settlementReason: true, settleTxHash: true, verifiedAt: true, createdAt: true },
                }),
                controlPlane: w.controlPlaneOutput().slice(-6_000),
              };
          t.ok(settled, 'recorded settled once mined', diagnostics);
          t.same(await balances(), { payee: before.payee + 10_000n, payer: before.payer - 10_000n }, 'one cent moved, once');
        },
      );
    });
  }
});
