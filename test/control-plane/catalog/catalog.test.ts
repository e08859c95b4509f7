import t from 'tap';
import { newId } from '../../../shared/ids.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { managementClient } from '../../helpers/management.js';

for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const cp = await startTestControlPlane(t, provider);
    const api = managementClient(cp.url);
    const { apiKey: key, sessionToken } = await cp.bootstrap();
    const seller = (await api.post('/v1/sellers', key, { name: 'Maps', slug: `maps-${provider}`, upstreamBaseUrl: 'https://maps.example' }))
      .body.seller;

    t.test('services: create, read, list by seller, update, delete', async (t) => {
      const seller = (await api.post('/v1/sellers', key, { name: 'Geo', slug: `geo-${provider}`, upstreamBaseUrl: 'https://geo.example' }))
        .body.seller;
      const created = await api.post('/v1/services', key, {
        sellerId: seller.id,
        name: 'Geocoding',
        slug: 'geocoding',
        description: 'Addresses to points',
      });
      t.equal(created.status, 201);
      const service = created.body.service;
      t.match(service, { id: /^svc_/, sellerId: seller.id, name: 'Geocoding', slug: 'geocoding', description: 'Addresses to points' });
      t.same((await api.get(`/v1/services/${service.id}`, sessionToken)).body, { service });
      t.same((await api.get(`/v1/services?sellerId=${seller.id}`, key)).body, { services: [service] });
      t.match(await api.post('/v1/services', key, { sellerId: seller.id, name: 'Again', slug: 'geocoding' }), {
        status: 409,
        body: { error: 'duplicate_slug' },
      });
      const patched = await api.patch(`/v1/services/${service.id}`, key, { name: 'Geo', description: null });
      t.match(patched, { status: 200, body: { service: { name: 'Geo', slug: 'geocoding', description: null } } });
      t.match(await api.get('/v1/services', key), { status: 400, body: { error: /^sellerId: / } }, 'the parent id is required');
      t.match(await api.get('/v1/services?sellerId=bogus', key), { status: 400, body: { error: /^sellerId: / } });
      t.match(
        await api.get(`/v1/services?sellerId=${seller.id}&sellerId=${seller.id}`, key),
        { status: 400 },
        'a repeated query parameter',
      );
      t.match(await api.get(`/v1/services?sellerId=${newId('seller')}`, key), { status: 404, body: { error: 'seller_not_found' } });
      t.match(await api.post('/v1/services', key, { sellerId: newId('seller'), name: 'x', slug: 'x' }), {
        status: 404,
        body: { error: 'seller_not_found' },
      });

      const meter = (await api.post('/v1/meters', key, { serviceId: service.id, key: 'lookups', unit: 'lookup' })).body.meter;
      const plan = (await api.post('/v1/plans', key, { serviceId: service.id, name: 'Pay per lookup', slug: 'payg', billingMode: 'payg' }))
        .body.plan;
      await api.post('/v1/plan-meter-prices', key, { planId: plan.id, meterId: meter.id, priceUsd: '0.05' });
      t.equal((await api.delete(`/v1/services/${service.id}`, key)).status, 204, 'deleting a service takes its catalog along');
      t.match(await api.get(`/v1/meters/${meter.id}`, key), { status: 404, body: { error: 'meter_not_found' } });
      t.match(await api.get(`/v1/plans/${plan.id}`, key), { status: 404, body: { error: 'plan_not_found' } });
      t.equal(await cp.db.planMeterPrice.count({ where: { planId: plan.id } }), 0);
    });

    const service = (await api.post('/v1/services', key, { sellerId: seller.id, name: 'Routing', slug: 'routing' })).body.service;

    t.test('meters: keys unique per service, CRUD, a priced meter is not deleted', async (t) => {
      const created = await api.post('/v1/meters', key, {
        serviceId: service.id,
        key: 'route.requests',
        unit: 'request',
        name: 'Route requests',
      });
      t.equal(created.status, 201);
      const meter = created.body.meter;
      t.match(meter, { id: /^mtr_/, serviceId: service.id, key: 'route.requests', unit: 'request', name: 'Route requests' });
      t.same((await api.get(`/v1/meters/${meter.id}`, key)).body, { meter });
      t.same((await api.get(`/v1/meters?serviceId=${service.id}`, key)).body, { meters: [meter] });
      t.match(await api.post('/v1/meters', key, { serviceId: service.id, key: 'route.requests', unit: 'x' }), {
        status: 409,
        body: { error: 'duplicate_key' },
      });
      const second = (await api.post('/v1/meters', key, { serviceId: service.id, key: 'km', unit: 'kilometre' })).body.meter;
      t.match(await api.patch(`/v1/meters/${second.id}`, key, { key: 'route.requests' }), {
        status: 409,
        body: { error: 'duplicate_key' },
      });
      t.match(await api.patch(`/v1/meters/${second.id}`, key, { unit: 'km', name: null }), {
        status: 200,
        body: { meter: { unit: 'km', name: null } },
      });
      t.match(await api.post('/v1/meters', key, { serviceId: service.id, key: 'Bad Key', unit: 'x' }), {
        status: 400,
        body: { error: /^key: / },
      });
      t.match(await api.post('/v1/meters', key, { serviceId: service.id, key: 'ok' }), { status: 400, body: { error: /^unit: / } });
      t.match(await api.get('/v1/meters', key), { status: 400, body: { error: /^serviceId: / } });

      const plan = (
        await api.post('/v1/plans', key, { serviceId: service.id, name: 'Credits', slug: 'meter-credits', billingMode: 'credit' })
      ).body.plan;
      const price = (await api.post('/v1/plan-meter-prices', key, { planId: plan.id, meterId: second.id, priceUsd: '0.000125' })).body
        .planMeterPrice;
      t.match(await api.delete(`/v1/meters/${second.id}`, key), { status: 409, body: { error: 'resource_in_use' } });
      t.equal((await api.delete(`/v1/plan-meter-prices/${price.id}`, key)).status, 204);
      t.equal((await api.delete(`/v1/meters/${second.id}`, key)).status, 204);
      t.match(await api.get(`/v1/meters/${second.id}`, key), { status: 404, body: { error: 'meter_not_found' } });
    });

    t.test('plans: the spec fields, defaults, enums and how they fit', async (t) => {
      const payg = await api.post('/v1/plans', key, { serviceId: service.id, name: 'Per call', slug: 'per-call', billingMode: 'payg' });
      t.equal(payg.status, 201);
      t.same(Object.keys(payg.body.plan).sort(), [
        'basePriceUsd',
        'billingMode',
        'createdAt',
        'id',
        'includedCreditUnitLabel',
        'includedCreditUnits',
        'includedCreditUsd',
        'interval',
        'kind',
        'maxClaims',
        'minimumPurchaseUsd',
        'name',
        'remintPolicy',
        'serviceId',
        'slug',
        'updatedAt',
        'verifiedEmailPolicy',
      ]);
      t.match(payg.body.plan, {
        billingMode: 'payg',
        interval: 'none',
        kind: 'standard',
        basePriceUsd: '0.000000',
        verifiedEmailPolicy: 'off',
        remintPolicy: 'rotating',
        maxClaims: null,
      });

      const monthly = await api.post('/v1/plans', key, {
        serviceId: service.id,
        name: 'Pro',
        slug: 'pro',
        billingMode: 'subscription_usage',
        basePriceUsd: '19.99',
        includedCreditUsd: '5.123456',
        includedCreditUnits: 1000,
        includedCreditUnitLabel: 'routes',
        minimumPurchaseUsd: '1',
        maxClaims: 3,
      });
      t.match(monthly, {
        status: 201,
        body: {
          plan: {
            billingMode: 'subscription_usage',
            interval: 'month',
            basePriceUsd: '19.990000',
            includedCreditUsd: '5.123456',
            includedCreditUnits: 1000,
            includedCreditUnitLabel: 'routes',
            minimumPurchaseUsd: '1.000000',
            maxClaims: 3,
          },
        },
      });
      t.same((await api.get(`/v1/plans/${monthly.body.plan.id}`, key)).body, { plan: monthly.body.plan }, 'GET returns { plan }');

      const trial = await api.post('/v1/plans', key, {
        serviceId: service.id,
        name: 'Trial',
        slug: 'trial',
        kind: 'free_trial',
        billingMode: 'credit',
        includedCreditUsd: '1',
      });
      t.match(trial.body.plan, { kind: 'free_trial', verifiedEmailPolicy: 'required' }, 'free trials default to a verified email');
      const relaxed = await api.post('/v1/plans', key, {
        serviceId: service.id,
        name: 'Trial 2',
        slug: 'trial-2',
        kind: 'free_trial',
        billingMode: 'credit',
        verifiedEmailPolicy: 'requested',
      });
      t.match(relaxed.body.plan, { verifiedEmailPolicy: 'requested' }, 'a seller may relax it');

      const listed = (await api.get(`/v1/plans?serviceId=${service.id}`, key)).body.plans.map((p: { slug: string }) => p.slug);
      t.same(
        listed.filter((s: string) => ['per-call', 'pro', 'trial', 'trial-2'].includes(s)),
        ['per-call', 'pro', 'trial', 'trial-2'],
      );

      t.match(await api.post('/v1/plans', key, { serviceId: service.id, name: 'Dup', slug: 'pro', billingMode: 'credit' }), {
        status: 409,
        body: { error: 'duplicate_slug' },
      });
      const base = { serviceId: service.id, name: 'X', slug: 'x' };
      const invalid: [string, Record<string, unknown>, RegExp][] = [
        ['unknown billing mode', { ...base, billingMode: 'monthly' }, /^billingMode: /],
        ['unknown interval', { ...base, billingMode: 'credit', interval: 'week' }, /^interval: /],
        ['unknown email policy', { ...base, billingMode: 'credit', verifiedEmailPolicy: 'maybe' }, /^verifiedEmailPolicy: /],
        ['unknown kind', { ...base, billingMode: 'credit', kind: 'gift' }, /^kind: /],
        [
          'seven decimals',
          { ...base, billingMode: 'credit', basePriceUsd: '1.0000001' },
          /^basePriceUsd: has more than six decimal places/,
        ],
        ['negative price', { ...base, billingMode: 'credit', basePriceUsd: '-1' }, /^basePriceUsd: /],
        ['price as a number', { ...base, billingMode: 'credit', basePriceUsd: 1 }, /^basePriceUsd: /],
        ['fractional units', { ...base, billingMode: 'credit', includedCreditUnits: 1.5 }, /^includedCreditUnits: /],
        ['units as a string', { ...base, billingMode: 'credit', includedCreditUnits: '5' }, /^includedCreditUnits: /],
        ['units as a boolean', { ...base, billingMode: 'credit', includedCreditUnits: true }, /^includedCreditUnits: /],
        ['zero claims', { ...base, billingMode: 'credit', maxClaims: 0 }, /^maxClaims: /],
        ['payg with a period', { ...base, billingMode: 'payg', interval: 'month' }, /^interval: a payg plan/],
        ['payg with a base price', { ...base, billingMode: 'payg', basePriceUsd: '5' }, /^basePriceUsd: a payg plan/],
        ['subscription without a period', { ...base, billingMode: 'subscription', interval: 'none' }, /^interval: a subscription/],
        ['paid free trial', { ...base, billingMode: 'credit', kind: 'free_trial', basePriceUsd: '1' }, /^basePriceUsd: a free_trial/],
      ];
      for (const [label, body, message] of invalid) {
        t.match(await api.post('/v1/plans', key, body), { status: 400, body: { error: message } }, label);
      }

      const plan = monthly.body.plan;
      const updated = await api.patch(`/v1/plans/${plan.id}`, key, {
        name: 'Pro+',
        interval: 'year',
        basePriceUsd: '199',
        includedCreditUnitLabel: null,
        maxClaims: null,
      });
      t.match(updated, {
        status: 200,
        body: {
          plan: {
            name: 'Pro+',
            interval: 'year',
            basePriceUsd: '199.000000',
            includedCreditUnitLabel: null,
            maxClaims: null,
            includedCreditUnits: 1000,
          },
        },
      });
      t.match(
        await api.patch(`/v1/plans/${plan.id}`, key, { billingMode: 'payg' }),
        { status: 400, body: { error: /Unrecognized key/ } },
        'billingMode is fixed',
      );
      t.match(await api.patch(`/v1/plans/${plan.id}`, key, { interval: 'none' }), { status: 400, body: { error: /^interval: / } });
      t.match(await api.patch(`/v1/plans/${plan.id}`, key, { slug: 'per-call' }), { status: 409, body: { error: 'duplicate_slug' } });
      t.match(await api.patch(`/v1/plans/${payg.body.plan.id}`, key, { basePriceUsd: '1' }), {
        status: 400,
        body: { error: /^basePriceUsd: a payg plan/ },
      });
      t.equal((await api.delete(`/v1/plans/${trial.body.plan.id}`, key)).status, 204);
      t.match(await api.get(`/v1/plans/${trial.body.plan.id}`, key), { status: 404, body: { error: 'plan_not_found' } });
    });

    t.test('plan meter prices: whole cents on payg, six decimals elsewhere, one price per meter', async (t) => {
      const meter = (await api.post('/v1/meters', key, { serviceId: service.id, key: 'tiles', unit: 'tile' })).body.meter;
      const payg = (
        await api.post('/v1/plans', key, { serviceId: service.id, name: 'Tiles per call', slug: 'tiles-payg', billingMode: 'payg' })
      ).body.plan;
      const credit = (
        await api.post('/v1/plans', key, { serviceId: service.id, name: 'Tile credits', slug: 'tiles-credit', billingMode: 'credit' })
      ).body.plan;

      t.match(await api.post('/v1/plan-meter-prices', key, { planId: payg.id, meterId: meter.id, priceUsd: '0.005' }), {
        status: 422,
        body: { error: 'payg_price_not_whole_cents' },
      });
      const created = await api.post('/v1/plan-meter-prices', key, {
        planId: payg.id,
        meterId: meter.id,
        priceUsd: '0.02',
        unitSize: 10,
        includedUnits: 100,
        defaultMaxQuantity: 50,
      });
      t.equal(created.status, 201);
      const price = created.body.planMeterPrice;
      t.same(Object.keys(price).sort(), [
        'createdAt',
        'defaultMaxQuantity',
        'description',
        'id',
        'includedUnits',
        'meter',
        'planId',
        'priceUsd',
        'unitSize',
        'updatedAt',
      ]);
      t.match(price, {
        id: /^pmp_/,
        planId: payg.id,
        meter: { id: meter.id, key: 'tiles', unit: 'tile' },
        priceUsd: '0.020000',
        unitSize: 10,
        includedUnits: 100,
        defaultMaxQuantity: 50,
      });
      t.same((await api.get(`/v1/plan-meter-prices?planId=${payg.id}`, key)).body, { planMeterPrices: [price] });
      t.same((await api.get(`/v1/plan-meter-prices/${price.id}`, key)).body, { planMeterPrice: price });
      t.match(await api.post('/v1/plan-meter-prices', key, { planId: payg.id, meterId: meter.id, priceUsd: '0.03' }), {
        status: 409,
        body: { error: 'duplicate_plan_meter_price' },
      });

      t.match(await api.patch(`/v1/plan-meter-prices/${price.id}`, key, { priceUsd: '0.015' }), {
        status: 422,
        body: { error: 'payg_price_not_whole_cents' },
      });
      t.match(await api.patch(`/v1/plan-meter-prices/${price.id}`, key, { priceUsd: '0.03', defaultMaxQuantity: null }), {
        status: 200,
        body: { planMeterPrice: { priceUsd: '0.030000', defaultMaxQuantity: null, unitSize: 10 } },
      });

      const sixDecimals = await api.post('/v1/plan-meter-prices', key, { planId: credit.id, meterId: meter.id, priceUsd: '0.000001' });
      t.match(sixDecimals, {
        status: 201,
        body: { planMeterPrice: { priceUsd: '0.000001', unitSize: 1, includedUnits: 0, defaultMaxQuantity: null } },
      });
      t.match(await api.post('/v1/plan-meter-prices', key, { planId: credit.id, meterId: meter.id, priceUsd: '0.0000001' }), {
        status: 400,
        body: { error: /^priceUsd: / },
      });

      const otherService = (await api.post('/v1/services', key, { sellerId: seller.id, name: 'Other', slug: 'other' })).body.service;
      const foreignMeter = (await api.post('/v1/meters', key, { serviceId: otherService.id, key: 'tiles', unit: 'tile' })).body.meter;
      t.match(await api.post('/v1/plan-meter-prices', key, { planId: credit.id, meterId: foreignMeter.id, priceUsd: '1' }), {
        status: 400,
        body: { error: /^meterId: the meter belongs to another service/ },
      });
      t.match(await api.post('/v1/plan-meter-prices', key, { planId: credit.id, meterId: newId('meter'), priceUsd: '1' }), {
        status: 404,
        body: { error: 'meter_not_found' },
      });
      t.match(await api.post('/v1/plan-meter-prices', key, { planId: newId('plan'), meterId: meter.id, priceUsd: '1' }), {
        status: 404,
        body: { error: 'plan_not_found' },
      });
      const malformed: [string, Record<string, unknown>, RegExp][] = [
        ['missing price', { planId: credit.id, meterId: meter.id }, /^priceUsd: /],
        ['zero unit size', { planId: credit.id, meterId: meter.id, priceUsd: '1', unitSize: 0 }, /^unitSize: /],
        [
          'quantity beyond the limit',
          { planId: credit.id, meterId: meter.id, priceUsd: '1', defaultMaxQuantity: 2_147_483_648 },
          /^defaultMaxQuantity: /,
        ],
        ['negative included units', { planId: credit.id, meterId: meter.id, priceUsd: '1', includedUnits: -1 }, /^includedUnits: /],
        ['unit size as a string', { planId: credit.id, meterId: meter.id, priceUsd: '1', unitSize: '2' }, /^unitSize: /],
      ];
      for (const [label, body, message] of malformed) {
        t.match(await api.post('/v1/plan-meter-prices', key, body), { status: 400, body: { error: message } }, label);
      }
      t.match(await api.get('/v1/plan-meter-prices', key), { status: 400, body: { error: /^planId: / } });

      t.equal((await api.delete(`/v1/plans/${payg.id}`, key)).status, 204, 'deleting a plan takes its prices along');
      t.match(await api.get(`/v1/plan-meter-prices/${price.id}`, key), { status: 404, body: { error: 'plan_meter_price_not_found' } });
    });

    t.test('plans buyers hold accounts on are not deleted, nor their service or seller', async (t) => {
      const plan = (await api.post('/v1/plans', key, { serviceId: service.id, name: 'Held', slug: 'held', billingMode: 'credit' })).body
        .plan;
      const agent = await cp.db.agent.create({ data: { id: newId('agent'), walletAddress: `0x${'1'.repeat(40)}` } });
      await cp.db.access.create({
        data: { id: newId('access'), sellerId: seller.id, planId: plan.id, agentId: agent.id, status: 'active' },
      });
      t.match(await api.delete(`/v1/plans/${plan.id}`, key), { status: 409, body: { error: 'resource_in_use' } });
      t.match(await api.delete(`/v1/services/${service.id}`, key), { status: 409, body: { error: 'resource_in_use' } });
      t.match(await api.delete(`/v1/sellers/${seller.id}`, key), { status: 409, body: { error: 'resource_in_use' } });
      t.equal((await api.get(`/v1/plans/${plan.id}`, key)).status, 200);
    });
  });
}
