import t from 'tap';
import { type Facilitator, FacilitatorUnavailableError } from '../../../control-plane/facilitator/facilitator.js';
import { tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { x402Fetch } from '../../helpers/x402-agent.js';

/** A chain or facilitator that cannot answer verification: a 503 the payer can retry, never a 402 or a 500. */

t.setTimeout(120_000);

for (const provider of testProviders()) {
  t.test(`${provider}: verification without an answer is 503 service_unavailable; the same payment goes through later`, async (t) => {
    let down = true;
    const flaky = (inner: Facilitator): Facilitator => ({
      verify: async (p, r) => {
        if (down) throw new FacilitatorUnavailableError('timeout', 'injected: the chain did not answer');
        return inner.verify(p, r);
      },
      supported: () => inner.supported(),
      settle: (p, r) => inner.settle(p, r),
    });
    const { chain, db, payTo, payerKey, url } = await startPaidWorld(t, provider, { wrapFacilitator: flaky });
    const before = await tokenBalance(chain, payTo);

    // The paid retry, kept to be sent again: the x402 client's own, captured on its way out.
    let paidRetry: Request | undefined;
    const capture: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      if (request.headers.has('payment-signature')) paidRetry = request.clone();
      return fetch(request);
    };
    const res = await x402Fetch(payerKey, capture)(url('/search?q=outage'));
    t.equal(res.status, 503);
    t.match(await res.json(), { error: 'service_unavailable', reason: /could not be verified/ });
    t.ok(paidRetry, 'the paid retry was sent');
    const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=outage' } });
    t.equal(attempt.status, 'challenge_created', 'the payment is untouched');
    t.equal(await tokenBalance(chain, payTo), before);

    down = false;
    const again = await fetch(paidRetry!);
    t.equal(again.status, 200, 'the same payment, sent again, is served');
    t.match(JSON.parse(again.headers.get('hub-billing') ?? '{}'), { status: 'settled', chargedUsd: '0.010000' });
    t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'paid once');
  });
}
