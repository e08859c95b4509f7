import t from 'tap';
import { testProviders } from '../../helpers/database.js';
import { usageWorld } from '../../helpers/usage-world.js';

// POST /v1/usage/check (spec: Endpoints › Usage check; Errors › Usage endpoints, check denial
// reasons). Always 200 { allowed, reason }; records nothing.
for (const provider of testProviders()) {
  t.test(`usage check on ${provider}`, async (t) => {
    const w = await usageWorld(t, provider);
    const denied = (reason: string) => ({ allowed: false, reason });
    const ask = async (zcRequestId: string, usage: unknown[], serviceSlug = 'forecast') => {
      const reply = await w.check({ zcRequestId, serviceSlug, usage });
      t.equal(reply.status, 200, 'a check always answers 200');
      return reply.body;
    };
    /** The answer in one word: 'allowed', or the denial's reason. */
    const verdict = async (zcRequestId: string, usage: unknown[], serviceSlug = 'forecast') => {
      const body = (await ask(zcRequestId, usage, serviceSlug)) as { allowed: boolean; reason: string | null };
      if (body.allowed) t.equal(body.reason, null, 'an allowed check has no reason');
      return body.allowed ? 'allowed' : body.reason;
    };
    const item = (meterSlug: string, quantity: number) => ({ meterSlug, quantity });
    const requests = (quantity: number) => [item('requests', quantity)];

    // An agent with a credit access: 10 included requests, then $0.001 each, from $1 of credit.
    const agentId = await w.agent();
    const accessId = await w.access({ agentId });
    const requestId = await w.request({ agentId });

    await t.test('an agent with an active access is allowed what its access covers', async (t) => {
      t.equal(await verdict(requestId, requests(1)), 'allowed');
      t.equal(await verdict(requestId, []), 'allowed', 'no items: the request is backed');
      t.equal(await verdict(requestId, [item('tokens', 1_500), item('requests', 3)]), 'allowed');
      t.equal(await verdict(requestId, requests(1_010)), 'allowed', '10 included + 1,000 × $0.001 = the whole $1');
      t.equal(await verdict(requestId, requests(1_011)), 'usage_exhausted', 'one request more than the credit');
    });

    await t.test('service_not_found: no service with the slug in the key’s organization', async (t) => {
      t.equal(await verdict(requestId, requests(1), 'nope'), 'service_not_found');
      const other = await w.cp.bootstrap();
      const reply = await w.check({ zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(1) }, other.apiKey);
      t.same(reply.body, denied('service_not_found'), 'another organization’s key does not see the service');
    });

    await t.test('access_not_found: no live request, or nothing behind it', async (t) => {
      t.equal(await verdict('hubreq_a00000000000000000000000', requests(1)), 'access_not_found', 'unknown request id');
      t.equal(await verdict('not-a-request-id', requests(1)), 'access_not_found', 'malformed request id');
      t.equal(await verdict(await w.request(), requests(1)), 'access_not_found', 'anonymous request (unpaid probe)');
      t.equal(await verdict(await w.request({ agentId: await w.agent() }), requests(1)), 'access_not_found', 'an agent without access');
      // The same slug under another seller of the organization: the request's seller decides.
      const otherSeller = `sel_${'o'.repeat(24)}`;
      await w.db.seller.create({
        data: {
          id: otherSeller,
          organizationId: w.organizationId,
          name: 'Other',
          slug: `other-${Date.now()}`,
          upstreamBaseUrl: 'http://127.0.0.1:9',
        },
      });
      t.equal(
        await verdict(await w.request({ agentId, sellerId: otherSeller }), requests(1)),
        'access_not_found',
        'a request to a seller without this service',
      );
    });

    await t.test('access_inactive: canceled, suspended, pending, or not started', async (t) => {
      for (const [label, options] of [
        ['canceled', { status: 'canceled' }],
        ['suspended', { status: 'suspended' }],
        ['pending', { status: 'pending' }],
        ['period not started', { periodStart: new Date(Date.now() + w.hour) }],
      ] as const) {
        const holder = await w.agent();
        await w.access({ agentId: holder, ...options });
        t.equal(await verdict(await w.request({ agentId: holder }), requests(1)), 'access_inactive', label);
      }
    });

    await t.test('plan_expired: the period has ended', async (t) => {
      const holder = await w.agent();
      await w.access({ agentId: holder, periodStart: new Date(Date.now() - 48 * w.hour), periodEnd: new Date(Date.now() - w.hour) });
      t.equal(await verdict(await w.request({ agentId: holder }), requests(1)), 'plan_expired');
    });

    await t.test('meter_not_found and meter_not_priced', async (t) => {
      t.equal(await verdict(requestId, [item('nope', 1)]), 'meter_not_found');
      t.equal(await verdict(requestId, [item('unpriced', 1)]), 'meter_not_priced', 'the plan does not price the meter');
      t.equal(
        await verdict(requestId, [{ meterSlug: 'requests' }]),
        'meter_not_priced',
        'no quantity, and the price has no defaultMaxQuantity',
      );
      t.equal(
        await verdict(requestId, [{ meterSlug: 'requests', quantity: null, maxQuantity: null }]),
        'meter_not_priced',
        'nulls are no quantity',
      );
    });

    await t.test('maxQuantity, or the price’s defaultMaxQuantity, is what must fit', async (t) => {
      const holder = await w.agent();
      await w.access({ agentId: holder, balanceMicros: 2_000n });
      const id = await w.request({ agentId: holder });
      t.equal(await verdict(id, [{ meterSlug: 'tokens' }]), 'allowed', 'tokens default to 50: one block of 1,000, $0.002');
      t.equal(await verdict(id, [{ meterSlug: 'tokens', maxQuantity: 1_000 }]), 'allowed');
      t.equal(
        await verdict(id, [{ meterSlug: 'tokens', quantity: 10, maxQuantity: 1_001 }]),
        'usage_exhausted',
        'maxQuantity counts, not quantity',
      );
      t.equal(await verdict(id, [item('tokens', 600), item('tokens', 600)]), 'usage_exhausted', 'items of one meter add up');
    });

    await t.test('the order of precedence', async (t) => {
      const holder = await w.agent();
      const canceled = await w.request({ agentId: holder });
      await w.access({ agentId: holder, status: 'canceled' });
      t.equal(await verdict(canceled, [item('nope', 1)], 'nope'), 'service_not_found', 'service before access');
      t.equal(await verdict('hubreq_a00000000000000000000000', [item('nope', 1)]), 'access_not_found', 'access before meter');
      t.equal(await verdict(canceled, [item('nope', 1)]), 'access_inactive', 'access state before meter');

      const expiredHolder = await w.agent();
      await w.access({ agentId: expiredHolder, periodEnd: new Date(Date.now() - 1) });
      t.equal(await verdict(await w.request({ agentId: expiredHolder }), [item('nope', 1)]), 'plan_expired', 'period before meter');

      t.equal(await verdict(requestId, [item('unpriced', 1), item('nope', 1)]), 'meter_not_found', 'meter before price');
      t.equal(await verdict(requestId, [item('requests', 1_000_000), item('unpriced', 1)]), 'meter_not_priced', 'price before allowance');
    });

    await t.test('several accesses: any one that fits allows; else the one that came closest answers', async (t) => {
      const holder = await w.agent();
      const id = await w.request({ agentId: holder });
      await w.access({ agentId: holder, status: 'canceled' });
      await w.access({ agentId: holder, periodEnd: new Date(Date.now() - 1) });
      t.equal(await verdict(id, requests(1)), 'plan_expired');
      await w.access({ agentId: holder, balanceMicros: 0n });
      t.equal(await verdict(id, requests(11)), 'usage_exhausted');
      await w.access({ agentId: holder, balanceMicros: 5_000n });
      t.equal(await verdict(id, requests(11)), 'allowed');
    });

    await t.test('a subscription without credit covers its included units only', async (t) => {
      const holder = await w.agent();
      await w.access({ agentId: holder, planId: w.plans.subscription, credit: false });
      const id = await w.request({ agentId: holder });
      t.equal(await verdict(id, requests(3)), 'allowed');
      t.equal(await verdict(id, requests(4)), 'usage_exhausted');
    });

    await t.test('an agent inherits its buyer’s accesses; a buyer id alone unlocks nothing', async (t) => {
      const owner = await w.buyer();
      const holder = await w.agent({ buyerId: owner });
      await w.access({ agentId: holder, buyerId: owner });
      const sibling = await w.agent({ buyerId: owner });
      t.equal(
        await verdict(await w.request({ agentId: sibling, buyerId: owner }), requests(1)),
        'allowed',
        'another agent of the same buyer',
      );

      const stranger = await w.agent();
      t.equal(
        await verdict(await w.request({ agentId: stranger, buyerId: owner }), requests(1)),
        'access_not_found',
        'an agent that does not belong to the buyer',
      );
      t.equal(await verdict(await w.request({ buyerId: owner }), requests(1)), 'access_not_found', 'a buyer id without an agent');
      const moved = await w.agent({ buyerId: await w.buyer() });
      t.equal(
        await verdict(await w.request({ agentId: moved, buyerId: owner }), requests(1)),
        'access_not_found',
        'an agent that belongs to another buyer',
      );
    });

    await t.test('a per-call payment covers the usage it was challenged for', async (t) => {
      const payer = await w.agent();
      const id = await w.request({ agentId: payer });
      await w.payment(id, [item('requests', 2)]);
      t.equal(await verdict(id, requests(2)), 'allowed');
      t.equal(await verdict(id, requests(3)), 'usage_exhausted', 'more than was paid for');
      t.equal(await verdict(id, [item('tokens', 1)]), 'meter_not_priced', 'the pay-as-you-go plan does not price tokens');
      t.equal(await verdict(id, [item('nope', 1)]), 'meter_not_found');
      t.equal(await verdict(id, [{ meterSlug: 'requests' }]), 'meter_not_priced', 'no quantity and no default');

      const anonymous = `hubreq_${'p'.repeat(24)}`;
      await w.payment(anonymous, [item('requests', 1)]);
      t.equal(await verdict(anonymous, requests(1)), 'allowed', 'a paid request needs no agent or request record');
      const done = `hubreq_${'q'.repeat(24)}`;
      await w.payment(done, [item('requests', 1)], 'delivered');
      t.equal(await verdict(done, requests(1)), 'access_not_found', 'a payment stands behind its request only while in flight');
      const challenged = `hubreq_${'r'.repeat(24)}`;
      await w.payment(challenged, [item('requests', 1)], 'challenge_created');
      t.equal(await verdict(challenged, requests(1)), 'access_not_found', 'an unpaid challenge is not a payment');
    });

    await t.test('free mode: the buyer’s included units, for claimed agents with a verified email', async (t) => {
      const owner = await w.buyer();
      const claimed = await w.agent({ buyerId: owner });
      const free = await w.request({ agentId: claimed, buyerId: owner, mode: 'free' });
      t.equal(await verdict(free, requests(5)), 'allowed', 'five free requests a month');
      t.equal(await verdict(free, requests(6)), 'usage_exhausted');
      t.equal(await verdict(free, [item('tokens', 1)]), 'meter_not_priced');

      const unclaimed = await w.agent({ buyerId: owner, claimed: false });
      t.equal(
        await verdict(await w.request({ agentId: unclaimed, buyerId: owner, mode: 'free' }), requests(1)),
        'access_not_found',
        'unclaimed agent',
      );
      const unverified = await w.buyer({ verified: false });
      const ofUnverified = await w.agent({ buyerId: unverified });
      t.equal(
        await verdict(await w.request({ agentId: ofUnverified, buyerId: unverified, mode: 'free' }), requests(1)),
        'access_not_found',
        'unverified email',
      );
      t.equal(
        await verdict(await w.request({ agentId: await w.agent(), mode: 'free' }), requests(1)),
        'access_not_found',
        'agent without a buyer',
      );
      t.equal(
        await verdict(await w.request({ agentId, mode: 'free' }), requests(1)),
        'access_not_found',
        'free mode ignores plan accesses',
      );
    });

    await t.test('checking records nothing and burns nothing', async (t) => {
      t.equal(await w.db.usageEvent.count(), 0);
      t.equal(await w.db.accessMeterUsage.count(), 0);
      t.equal(await w.db.includedUnitsUsage.count(), 0);
      t.equal(await w.balance(accessId), 1_000_000n);
    });
  });
}
