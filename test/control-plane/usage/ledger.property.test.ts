import fc from 'fast-check';
import t from 'tap';
import { formatUsd } from '../../../shared/money.js';
import { testProviders } from '../../helpers/database.js';
import { usageWorld } from '../../helpers/usage-world.js';

// The cost rules end to end: random report sequences against a fresh access, over HTTP, must
// leave exactly the balance and included-unit count a plain model of the rules predicts, and
// each check must agree with the report that follows it.
//
// The credit plan of the test world: `requests` 10 included then $0.001 each; `tokens` $0.002
// per started 1,000, none included. The units plan: 20 credit units a period, `requests` 2
// included, the same prices after the units, `pings` free.
const REQUESTS = { priceMicros: 1_000n, unitSize: 1n, included: 10n };
const TOKENS = { priceMicros: 2_000n, unitSize: 1_000n, included: 0n };
const UNITS = { granted: 20n, requestsIncluded: 2n };
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
const least = (a: bigint, b: bigint) => (a < b ? a : b);

for (const provider of testProviders()) {
  t.test(`usage ledger model on ${provider}`, async (t) => {
    const w = await usageWorld(t, provider);
    let n = 0;
    const step = fc.record({ requests: fc.integer({ min: 0, max: 8 }), tokens: fc.integer({ min: 0, max: 3_500 }) });

    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 20_000 }), fc.array(step, { minLength: 1, maxLength: 8 }), async (granted, steps) => {
        const agentId = await w.agent();
        const accessId = await w.access({ agentId, balanceMicros: BigInt(granted) });
        const zcRequestId = await w.request({ agentId });
        let balance = BigInt(granted);
        let used = 0n;
        for (const { requests, tokens } of steps) {
          const q = BigInt(requests);
          const included = q < REQUESTS.included - used ? q : REQUESTS.included - used;
          const cost = (q - included) * REQUESTS.priceMicros + ceilDiv(BigInt(tokens), TOKENS.unitSize) * TOKENS.priceMicros;
          const fits = cost <= balance;
          const usage = [
            { meterSlug: 'requests', quantity: requests },
            { meterSlug: 'tokens', quantity: tokens },
          ];

          const check = await w.check({ zcRequestId, serviceSlug: 'forecast', usage });
          if (check.body.allowed !== fits) return false;
          const report = await w.report({ idempotencyKey: `ledger-${++n}`, zcRequestId, serviceSlug: 'forecast', usage });
          if (report.status !== (fits ? 200 : 402)) return false;
          if (fits) {
            balance -= cost;
            used += included;
          }
        }
        const unitsUsed = (await w.db.accessMeterUsage.findFirst({ where: { accessId, meterId: w.meters.requests } }))?.unitsUsed ?? 0n;
        return (await w.balance(accessId)) === balance && unitsUsed === used;
      }),
      { numRuns: 12 },
    );
    t.pass('balances and included units match the model');
  });

  t.test(`credit units ledger model on ${provider}`, async (t) => {
    const w = await usageWorld(t, provider);
    let n = 0;
    const step = fc.record({
      requests: fc.integer({ min: 0, max: 9 }),
      tokens: fc.integer({ min: 0, max: 2_500 }),
      pings: fc.integer({ min: 0, max: 30 }),
    });

    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 20_000 }), fc.array(step, { minLength: 1, maxLength: 8 }), async (granted, steps) => {
        const agentId = await w.agent();
        const accessId = await w.access({ agentId, planId: w.plans.units, balanceMicros: BigInt(granted) });
        const zcRequestId = await w.request({ agentId });
        let balance = BigInt(granted);
        let included = 0n;
        let units = 0n;
        for (const { requests, tokens, pings } of steps) {
          // Items in the order asked: requests, then tokens, then the free pings (which take no units).
          const q = BigInt(requests);
          const fromIncluded = least(q, UNITS.requestsIncluded - included);
          const requestUnits = least(q - fromIncluded, UNITS.granted - units);
          const tokenUnits = least(BigInt(tokens), UNITS.granted - units - requestUnits);
          const cost =
            (q - fromIncluded - requestUnits) * REQUESTS.priceMicros +
            ceilDiv(BigInt(tokens) - tokenUnits, TOKENS.unitSize) * TOKENS.priceMicros;
          const fits = cost <= balance;
          const usage = [
            { meterSlug: 'requests', quantity: requests },
            { meterSlug: 'tokens', quantity: tokens },
            { meterSlug: 'pings', quantity: pings },
          ];

          const check = await w.check({ zcRequestId, serviceSlug: 'forecast', usage });
          if (check.body.allowed !== fits) return false;
          const report = await w.report({ idempotencyKey: `units-${++n}`, zcRequestId, serviceSlug: 'forecast', usage });
          if (report.status !== (fits ? 200 : 402)) return false;
          if (fits) {
            if (report.body.costUsd !== formatUsd(cost)) return false;
            balance -= cost;
            included += fromIncluded;
            units += requestUnits + tokenUnits;
          }
        }
        const pool = await w.db.accessCreditUnitsUsage.findFirst({ where: { accessId } });
        return (await w.balance(accessId)) === balance && (pool?.unitsUsed ?? 0n) === units;
      }),
      { numRuns: 10 },
    );
    t.pass('balances, included units and credit units match the model');
  });
}
