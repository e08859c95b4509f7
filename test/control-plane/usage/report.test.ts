import t from 'tap';
import { bindingsAndProviders, usageWorld } from '../../helpers/usage-world.js';

// POST /v1/usage (spec: Endpoints › Usage report; Errors › Usage endpoints, report failures).
// Cost rules: docs/decisions.md › Usage.
for (const [provider, binding] of bindingsAndProviders()) {
  t.test(`usage report on ${provider}, ${binding} binding`, async (t) => {
    const w = await usageWorld(t, provider, binding);
    let n = 0;
    const key = () => `key-${++n}`;
    const requests = (quantity: number) => [{ meterSlug: 'requests', quantity }];

    await t.test('records the event, draws included units first, then credit per started unit block', async (t) => {
      const agentId = await w.agent();
      const accessId = await w.access({ agentId, balanceMicros: 10_000n });
      const requestId = await w.request({ agentId });

      const first = await w.report({ idempotencyKey: key(), zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(8) });
      t.equal(first.status, 200);
      t.match(first.body, { id: /^use_[0-9A-Za-z]{24}$/, duplicate: false, costUsd: '0.000000' }, 'within the 10 included requests');
      t.equal(await w.balance(accessId), 10_000n);

      const second = await w.report({ idempotencyKey: key(), zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(5) });
      t.same(second.body.costUsd, '0.003000', '2 included, 3 × $0.001');
      t.equal(await w.balance(accessId), 7_000n);

      const reportTokens = (quantity: number) =>
        w.report({ idempotencyKey: key(), zcRequestId: requestId, serviceSlug: 'forecast', usage: [{ meterSlug: 'tokens', quantity }] });
      const tokens = await reportTokens(1_001);
      t.same(tokens.body.costUsd, '0.004000', '1,001 tokens are two started blocks of 1,000 at $0.002');
      t.equal(await w.balance(accessId), 3_000n);

      const zero = await reportTokens(0);
      t.same(zero.body.costUsd, '0.000000', 'quantity 0 records a capped meter at zero');

      const events = await w.events(requestId);
      t.equal(events.length, 4);
      const second_ = events.find((e) => e.id === second.body.id)!;
      t.match(second_, { source: 'report', accessId, serviceId: w.serviceId, costMicros: 3_000n, paymentAttemptId: null });
      t.match(second_.items, [{ meterId: w.meters.requests, quantity: 5n, includedUnits: 2n, costMicros: 3_000n }]);
      const usage = await w.db.accessMeterUsage.findMany({ where: { accessId } });
      t.match(usage, [{ meterId: w.meters.requests, unitsUsed: 10n }], 'included units counted for the access period');
    });

    await t.test('a replayed key answers 200 duplicate: true and changes nothing; another body under it is 409', async (t) => {
      const agentId = await w.agent();
      const accessId = await w.access({ agentId, balanceMicros: 100_000n });
      const requestId = await w.request({ agentId });
      const body = {
        idempotencyKey: 'same',
        zcRequestId: requestId,
        serviceSlug: 'forecast',
        usage: [...requests(20), { meterSlug: 'tokens', quantity: 10 }],
      };
      const first = await w.report(body);
      t.same(first.body, { id: first.body.id, duplicate: false, costUsd: '0.012000' });
      const balance = await w.balance(accessId);

      const again = await w.report(body);
      t.equal(again.status, 200);
      t.same(again.body, { ...first.body, duplicate: true });
      const reordered = await w.report({ ...body, usage: [...body.usage].reverse() });
      t.same(reordered.body, { ...first.body, duplicate: true }, 'the order of items does not make another body');
      t.equal(await w.balance(accessId), balance, 'nothing burned twice');

      const reused = await w.report({ ...body, usage: requests(21) });
      t.equal(reused.status, 409);
      t.equal(reused.body.error, 'idempotency_key_reused');
      const elsewhere = await w.report({ ...body, zcRequestId: await w.request({ agentId }) });
      t.equal(elsewhere.status, 409, 'the same items for another request are another body');
      t.equal((await w.events(requestId)).length, 1);
      t.equal(await w.balance(accessId), balance);
    });

    await t.test('failures per the spec table, and nothing recorded for any of them', async (t) => {
      const holder = await w.agent();
      const live = await w.request({ agentId: holder });
      await w.access({ agentId: holder, balanceMicros: 0n });
      const canceled = await w.agent();
      await w.access({ agentId: canceled, status: 'canceled' });
      const expired = await w.agent();
      await w.access({ agentId: expired, periodEnd: new Date(Date.now() - 1) });

      const cases: [string, Record<string, unknown>, number, string][] = [
        ['service_not_found', { zcRequestId: live, serviceSlug: 'nope', usage: requests(1) }, 404, 'service_not_found'],
        ['access_not_found', { zcRequestId: await w.request(), serviceSlug: 'forecast', usage: requests(1) }, 404, 'access_not_found'],
        [
          'access_inactive',
          { zcRequestId: await w.request({ agentId: canceled }), serviceSlug: 'forecast', usage: requests(1) },
          402,
          'access_inactive',
        ],
        [
          'plan_expired',
          { zcRequestId: await w.request({ agentId: expired }), serviceSlug: 'forecast', usage: requests(1) },
          402,
          'plan_expired',
        ],
        [
          'meter_not_found',
          { zcRequestId: live, serviceSlug: 'forecast', usage: [{ meterSlug: 'nope', quantity: 1 }] },
          404,
          'meter_not_found',
        ],
        [
          'meter_not_priced',
          { zcRequestId: live, serviceSlug: 'forecast', usage: [{ meterSlug: 'unpriced', quantity: 1 }] },
          409,
          'meter_not_priced',
        ],
        ['usage_exhausted', { zcRequestId: live, serviceSlug: 'forecast', usage: requests(11) }, 402, 'usage_exhausted'],
      ];
      for (const [label, body, status, error] of cases) {
        const reply = await w.report({ idempotencyKey: key(), ...body });
        t.equal(reply.status, status, `${label}: status`);
        t.equal(reply.body.error, error, `${label}: code`);
      }
      t.equal(await w.db.usageEvent.count({ where: { requestId: live } }), 0);
      t.equal(
        await w.db.accessMeterUsage.count({ where: { access: { agentId: holder } } }),
        0,
        'a failed multi-item report draws nothing, not even its included units',
      );

      const partial = await w.report({
        idempotencyKey: 'partial',
        zcRequestId: live,
        serviceSlug: 'forecast',
        usage: [...requests(10), { meterSlug: 'tokens', quantity: 1 }],
      });
      t.equal(partial.status, 402, 'included requests fit, the tokens do not: all or nothing');
      t.equal(await w.db.accessMeterUsage.count({ where: { access: { agentId: holder } } }), 0);
      const retried = await w.report({ idempotencyKey: 'partial', zcRequestId: live, serviceSlug: 'forecast', usage: requests(10) });
      t.equal(retried.status, 200, 'a refused report does not use up its key');
    });

    await t.test('a subscription without credit draws included units, then refuses', async (t) => {
      const agentId = await w.agent();
      const accessId = await w.access({ agentId, planId: w.plans.subscription, credit: false });
      const requestId = await w.request({ agentId });
      t.equal((await w.report({ idempotencyKey: key(), zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(2) })).status, 200);
      t.equal(
        (await w.report({ idempotencyKey: key(), zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(2) })).body.error,
        'usage_exhausted',
      );
      t.equal((await w.report({ idempotencyKey: key(), zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(1) })).status, 200);
      t.equal(await w.balance(accessId), 0n);
    });

    await t.test('credit units: one pool a period for the plan’s priced meters, before credit, shown on the account', async (t) => {
      const agentId = await w.agent();
      const accessId = await w.access({ agentId, planId: w.plans.units, balanceMicros: 10_000n });
      const requestId = await w.request({ agentId });
      const report = (usage: { meterSlug: string; quantity: number }[]) =>
        w.report({ idempotencyKey: key(), zcRequestId: requestId, serviceSlug: 'forecast', usage });
      const account = async () => (await w.api.get(`/v1/accounts/${accessId}`, w.boot.apiKey)).body.account;

      const first = await report([
        { meterSlug: 'requests', quantity: 12 },
        { meterSlug: 'pings', quantity: 50 },
      ]);
      t.match(first.body, { costUsd: '0.000000' }, '2 included, 10 from the pool; pings are free and take none');
      t.match((await account()).creditUnits, { label: 'credits', includedUnits: 20, usedUnits: 10 });
      const second = await report([{ meterSlug: 'tokens', quantity: 4_010 }]);
      t.match(second.body, { costUsd: '0.008000' }, 'the last 10 units, then 4,000 tokens: four blocks');
      t.equal(await w.balance(accessId), 2_000n);
      const [event] = (await w.events(requestId)).filter((e) => e.id === second.body.id);
      t.match(event!.items, [{ meterId: w.meters.tokens, quantity: 4_010n, includedUnits: 0n, creditUnits: 10n, costMicros: 8_000n }]);
      t.match((await account()).creditUnits, { usedUnits: 20 });
      t.match(await w.check({ zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(3) }), {
        status: 200,
        body: { allowed: false, reason: 'usage_exhausted' },
      });

      // Time is moved, not state made: the seller's write starts the next period.
      const next = new Date(Date.now() - 60_000);
      await w.db.access.update({ where: { id: accessId }, data: { periodStart: next } });
      t.match((await account()).creditUnits, { usedUnits: 0 }, 'a new period, a full pool');
      t.match((await report(requests(3))).body, { costUsd: '0.000000' }, 'included units and units again');
      t.match((await account()).creditUnits, { usedUnits: 1 });
    });

    await t.test('credit units stand in for credit on an account without any', async (t) => {
      const agentId = await w.agent();
      const accessId = await w.access({ agentId, planId: w.plans.units, credit: false });
      const requestId = await w.request({ agentId });
      t.equal(
        (await w.report({ idempotencyKey: key(), zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(22) })).status,
        200,
      );
      t.match(await w.report({ idempotencyKey: key(), zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(1) }), {
        status: 402,
        body: { error: 'usage_exhausted' },
      });
      t.match((await w.api.get(`/v1/accounts/${accessId}`, w.boot.apiKey)).body.account, {
        balanceUsd: null,
        creditUnits: { includedUnits: 20, usedUnits: 20 },
      });
    });

    await t.test('reports draw from the agent’s own access first, then its buyer’s, oldest first', async (t) => {
      const owner = await w.buyer();
      const agentId = await w.agent({ buyerId: owner });
      const shared = await w.access({ agentId: await w.agent({ buyerId: owner }), buyerId: owner, balanceMicros: 5_000n });
      const own = await w.access({ agentId, balanceMicros: 1_000n, periodStart: null, periodEnd: null });
      const requestId = await w.request({ agentId, buyerId: owner });
      const spend = (quantity: number) =>
        w.report({ idempotencyKey: key(), zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(quantity) });
      t.equal((await spend(11)).status, 200);
      t.equal(await w.balance(own), 0n, 'the agent’s own access first');
      t.equal((await spend(2)).status, 200);
      t.equal(await w.balance(shared), 5_000n, 'the buyer’s access still has its included units');
      t.equal((await spend(10)).status, 200);
      t.equal(await w.balance(shared), 3_000n, '8 included left there, then 2 × $0.001');
    });

    await t.test('a paid request: events at the pay-as-you-go price, no plan credit burned', async (t) => {
      const agentId = await w.agent();
      const accessId = await w.access({ agentId });
      const requestId = await w.request({ agentId });
      const paymentAttemptId = await w.payment(requestId, [{ meterSlug: 'requests', quantity: 2 }]);
      const reply = await w.report({ idempotencyKey: key(), zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(3) });
      t.equal(reply.status, 200, 'beyond the payment is recorded; settlement caps it at what was authorized');
      t.equal(reply.body.costUsd, '0.030000');
      t.match(await w.events(requestId), [
        { paymentAttemptId, accessId: null, costMicros: 30_000n, items: [{ quantity: 3n, includedUnits: 0n, costMicros: 30_000n }] },
      ]);
      t.equal(await w.balance(accessId), 1_000_000n, 'the plan is untouched');
      t.equal(await w.db.accessMeterUsage.count({ where: { accessId } }), 0);

      const delivered = `hubreq_${'d'.repeat(24)}`;
      await w.payment(delivered, [{ meterSlug: 'requests', quantity: 1 }], 'delivered');
      t.equal(
        (await w.report({ idempotencyKey: key(), zcRequestId: delivered, serviceSlug: 'forecast', usage: requests(1) })).status,
        200,
        'reports are taken after delivery too',
      );
      t.equal(
        (
          await w.report({
            idempotencyKey: key(),
            zcRequestId: delivered,
            serviceSlug: 'forecast',
            usage: [{ meterSlug: 'tokens', quantity: 1 }],
          })
        ).body.error,
        'meter_not_priced',
      );
      const settled = `hubreq_${'s'.repeat(24)}`;
      await w.payment(settled, [{ meterSlug: 'requests', quantity: 1 }], 'settled');
      t.equal(
        (await w.report({ idempotencyKey: key(), zcRequestId: settled, serviceSlug: 'forecast', usage: requests(1) })).body.error,
        'access_not_found',
        'not once settled',
      );
      // A late report for a paid call of an agent that also holds a plan: the call was paid, so
      // nothing may fall through to the plan.
      const paidThenReported = await w.request({ agentId });
      await w.payment(paidThenReported, [{ meterSlug: 'requests', quantity: 1 }], 'settled');
      const late = await w.report({ idempotencyKey: key(), zcRequestId: paidThenReported, serviceSlug: 'forecast', usage: requests(1) });
      t.equal(late.body.error, 'access_not_found', 'a report after settlement');
      t.equal(await w.balance(accessId), 1_000_000n, 'never drawn from the plan');
      t.equal(await w.events(paidThenReported).then((events) => events.length), 0);
    });

    await t.test('free mode draws the buyer’s pool, shared by its agents, this month', async (t) => {
      const owner = await w.buyer();
      const one = await w.agent({ buyerId: owner });
      const two = await w.agent({ buyerId: owner });
      const free = async (agentId: string, quantity: number) =>
        w.report({
          idempotencyKey: key(),
          zcRequestId: await w.request({ agentId, buyerId: owner, mode: 'free' }),
          serviceSlug: 'forecast',
          usage: requests(quantity),
        });
      t.same((await free(one, 3)).body.costUsd, '0.000000');
      t.equal((await free(two, 3)).body.error, 'usage_exhausted', '3 + 3 is more than the 5 a month');
      t.equal((await free(two, 2)).status, 200);
      t.equal((await free(one, 1)).status, 402);
      const now = new Date();
      t.match(await w.db.includedUnitsUsage.findMany({ where: { buyerId: owner } }), [
        { meterId: w.meters.requests, unitsUsed: 5n, periodStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)) },
      ]);
    });

    await t.test('malformed bodies are 400 and record nothing', async (t) => {
      const agentId = await w.agent();
      await w.access({ agentId });
      const zcRequestId = await w.request({ agentId });
      const valid = { idempotencyKey: 'malformed', zcRequestId, serviceSlug: 'forecast', usage: requests(1) };
      const bodies: [string, unknown][] = [
        ['no idempotencyKey', { ...valid, idempotencyKey: undefined }],
        ['empty idempotencyKey', { ...valid, idempotencyKey: '' }],
        ['no zcRequestId', { ...valid, zcRequestId: undefined }],
        ['no serviceSlug', { ...valid, serviceSlug: undefined }],
        ['usage not an array', { ...valid, usage: { meterSlug: 'requests', quantity: 1 } }],
        ['no items', { ...valid, usage: [] }],
        ['no quantity', { ...valid, usage: [{ meterSlug: 'requests' }] }],
        ['a negative quantity', { ...valid, usage: requests(-1) }],
        ['a fractional quantity', { ...valid, usage: requests(1.5) }],
        ['a quantity above 2,147,483,647', { ...valid, usage: requests(2_147_483_648) }],
        ['a quantity as a string', { ...valid, usage: [{ meterSlug: 'requests', quantity: '1' }] }],
        ['a quantity as a boolean', { ...valid, usage: [{ meterSlug: 'requests', quantity: true }] }],
        ['an unknown field', { ...valid, extra: 1 }],
        ['an unknown item field', { ...valid, usage: [{ meterSlug: 'requests', quantity: 1, serviceSlug: 'forecast' }] }],
        ['101 items', { ...valid, usage: Array.from({ length: 101 }, () => ({ meterSlug: 'requests', quantity: 1 })) }],
      ];
      for (const [label, body] of bodies) {
        const reply = await w.report(body);
        t.equal(reply.status, 400, label);
        t.type(reply.body?.error, 'string', `${label}: a message`);
      }
      for (const [label, rawBody, contentType] of [
        ['not JSON', '{"idempotencyKey":', 'application/json'],
        ['a JSON array', '[]', 'application/json'],
      ] as const) {
        const reply = await w.api.call('POST', '/v1/usage', { token: w.boot.apiKey, rawBody, headers: { 'content-type': contentType } });
        t.equal(reply.status, 400, label);
      }
      const check = await w.check({
        zcRequestId,
        serviceSlug: 'forecast',
        usage: [{ meterSlug: 'requests', quantity: 2, maxQuantity: 1 }],
      });
      t.equal(check.status, 400, 'a check whose quantity exceeds its maxQuantity');
      t.equal((await w.check({ zcRequestId, serviceSlug: 'forecast' })).status, 400, 'a check without usage');
      t.equal(await w.db.usageEvent.count({ where: { requestId: zcRequestId } }), 0);
      t.equal((await w.report(valid)).status, 200, 'the key was not used up by the malformed attempts');
    });

    await t.test('a paid request reported past any amount hub represents counts that amount, never overflows', async (t) => {
      // $5,000 a token on pay as you go (whole cents): 2,147,483,647 of them cost past 2^63 micro-USD.
      await w.price(w.plans.payg, w.meters.tokens, { priceMicros: 5_000_000_000n });
      const requestId = await w.request({ agentId: await w.agent() });
      const paymentAttemptId = await w.payment(requestId, [{ meterSlug: 'tokens', quantity: 1 }]);
      const huge = Array.from({ length: 3 }, () => ({ meterSlug: 'tokens', quantity: 2_147_483_647 }));
      const reply = await w.report({ idempotencyKey: key(), zcRequestId: requestId, serviceSlug: 'forecast', usage: huge });
      t.equal(reply.status, 200, 'recorded; settlement caps it at what was authorized');
      t.equal(reply.body.costUsd, '999999999999.999999');
      t.match(await w.events(requestId), [
        {
          paymentAttemptId,
          costMicros: 999_999_999_999_999_999n,
          items: [{ quantity: 3n * 2_147_483_647n, costMicros: 999_999_999_999_999_999n }], // one meter's items are one
        },
      ]);
    });
  });
}
