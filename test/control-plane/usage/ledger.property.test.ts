import fc from 'fast-check';
import t from 'tap';
import { testProviders } from '../../helpers/database.js';
import { usageWorld } from '../../helpers/usage-world.js';

// The cost rules end to end: random report sequences against a fresh access, over HTTP, must
// leave exactly the balance and included-unit count a plain model of the rules predicts, and
// each check must agree with the report that follows it.
//
// The credit plan of the test world: `requests` 10 included then $0.001 each; `tokens` $0.002
// per started 1,000, none included.
const REQUESTS = { priceMicros: 1_000n, unitSize: 1n, included: 10n };
const TOKENS = { priceMicros: 2_000n, unitSize: 1_000n, included: 0n };
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

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
}
