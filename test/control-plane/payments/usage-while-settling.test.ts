import t from 'tap';
import type { Facilitator } from '../../../control-plane/facilitator/facilitator.js';
import { settlementsAfterResponse } from '../../../control-plane/payments/settlement/under-way.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { rowLocks, underWay, until } from '../../helpers/row-locks.js';
import { x402Fetch } from '../../helpers/x402-agent.js';

// A paid request's charge is priced from the usage reported by the time it settles. A usage
// report that comes later is refused (access_not_found), never recorded and left unbilled; one
// racing the start of settlement is either priced or refused (docs/decisions.md › Usage while settling).

/** Settlements wait at the facilitator while `held`, until `release`. */
function facilitatorGate() {
  let open = () => {};
  const gate = {
    held: false,
    opened: Promise.resolve(),
    hold() {
      gate.held = true;
      gate.opened = new Promise<void>((resolve) => (open = resolve));
    },
    release() {
      gate.held = false;
      open();
    },
    wrap: (inner: Facilitator): Facilitator => ({
      verify: (p, r) => inner.verify(p, r),
      supported: () => inner.supported(),
      settle: async (p, r) => {
        await gate.opened;
        return inner.settle(p, r);
      },
    }),
  };
  return gate;
}

for (const provider of testProviders()) {
  t.test(`usage reported while a payment settles, on ${provider}`, async (t) => {
    const gate = facilitatorGate();
    const world = await startPaidWorld(t, provider, { wrapFacilitator: gate.wrap });
    const { api, hub, db, payerKey, sellerId, served, url } = world;
    const pay = x402Fetch(payerKey);
    let n = 0;
    /** The seller reports one more call for the request, as POST /v1/usage. */
    const reportOneMore = (requestId: string) =>
      api.post('/v1/usage', hub.apiKey, {
        idempotencyKey: `late-${++n}`,
        zcRequestId: requestId,
        serviceSlug: 'search',
        usage: [{ meterSlug: 'calls', quantity: 1 }],
      });
    const billing = (res: Response) => JSON.parse(res.headers.get('hub-billing') ?? '{}') as Record<string, string>;

    await t.test('once settlement has started, a report is refused and the charge stands', async (t) => {
      t.equal((await api.patch(`/v1/sellers/${sellerId}`, hub.apiKey, { settlement: 'after_response' })).status, 200);
      gate.hold();
      // Up to three calls authorized, one reported in hub-usage: answered at once, settling.
      const res = await pay(url('/search?max=3&used=1'));
      t.equal(res.status, 200);
      t.match(billing(res), { status: 'settling' });
      await res.text();
      const requestId = served.at(-1)!;

      const late = await reportOneMore(requestId);
      t.equal(late.status, 404, 'refused, not recorded to be lost');
      t.match(late.body, { error: 'access_not_found', reason: /started settling/ });

      gate.release();
      await settlementsAfterResponse();
      const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { requestId } });
      t.match(attempt, { status: 'settled', chargedMicros: 10_000n }, 'charged the one call reported in time');
      t.equal((await reportOneMore(requestId)).body.error, 'access_not_found', 'and after it settled');
      await api.patch(`/v1/sellers/${sellerId}`, hub.apiKey, { settlement: 'before_response' });
    });

    await t.test('a report racing the start of settlement is priced or refused, never lost', async (t) => {
      const locks = provider === 'postgresql' ? await rowLocks(t, hub.cp.config.database) : undefined;
      const before = served.length;
      // Up to three calls authorized, none reported in hub-usage (so the charge is all three
      // unless the report comes in time), and the seller holds its answer at /hold until the
      // test lets it go: the payment is in flight.
      const call = underWay(pay(url('/hold?max=3')));
      await until(() => served.length > before, 'the paid retry reaching the seller');
      const requestId = served.at(-1)!;

      let report: ReturnType<typeof reportOneMore>;
      if (locks) {
        // Another connection holds the payment: settlement waits for it, and the report comes
        // while it does.
        const release = await locks.hold('PaymentAttempt', 'requestId', requestId);
        world.releaseHold();
        await until(async () => (await locks.waiting()) > 0, 'settlement waiting');
        const racing = underWay(reportOneMore(requestId));
        await until(async () => racing.answered || (await locks.waiting()) > 1, 'the report answered or waiting');
        await release();
        report = racing.response;
      } else {
        world.releaseHold();
        report = reportOneMore(requestId);
      }
      const [res, reported] = await Promise.all([call.response, report]);
      t.equal(res.status, 200);
      await res.text();
      if (reported.status === 200) {
        t.match(billing(res), { status: 'settled', chargedUsd: '0.010000' }, 'taken, and priced: the one call reported');
      } else {
        t.match(reported.body, { error: 'access_not_found' }, 'refused');
        t.match(billing(res), { status: 'settled', chargedUsd: '0.030000' }, 'nothing reported in time: the three authorized');
      }
    });
  });
}
