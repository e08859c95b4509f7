import pino from 'pino';
import t from 'tap';
import { setStatefulFlags } from '../../../control-plane/catalog/sellers.js';
import { AccountWriteWorker } from '../../../control-plane/delivery/account-write-worker.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { startAccountReceiver } from '../../helpers/account-receiver.js';
import { registerAgent } from '../../helpers/agents.js';
import { claimAgent } from '../../helpers/claims.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { signPayment } from '../../helpers/sign-payment.js';
import { startTestSmtpServer } from '../../helpers/smtp-server.js';

// The buyer's verified email and a stateful seller (spec: Resources › Plan `verifiedEmailPolicy`,
// Account write body, Seller account endpoint), in both write variants, with the SDK's account
// endpoint as the seller: `off` never sends it, `requested` sends it once a human has claimed the
// agent, `required` refuses an unclaimed agent before any payment is asked.

const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
type Json = Record<string, any>;

for (const provider of testProviders()) {
  t.test(`the buyer's email per plan policy on ${provider}`, async (t) => {
    const smtp = await startTestSmtpServer(t);
    const { hub, chain, db, api, payerKey, url, sellerId, rail, secretOf, offerPlan } = await startPaidWorld(t, provider, {
      env: { HUB_SMTP_URL: smtp.url },
    });
    const seller = await startAccountReceiver(t, secretOf);
    const worker = new AccountWriteWorker(db, hub.cp.masterKey, { live: rail }, pino({ level: 'silent' }), { pollMs: 60_000 });
    await setStatefulFlags(db, sellerId, { servicing: true });

    const buy = async (token: string, planId: string) => {
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const body = JSON.stringify({ planId });
      const challenge = await fetch(url('/extend'), { method: 'POST', headers, body });
      if (challenge.status !== 402) return { status: challenge.status, body: (await challenge.json()) as Json };
      const requirements = ((await challenge.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
      const payment = await signPayment(chain, payerKey, requirements);
      const res = await fetch(url('/extend'), { method: 'POST', headers: { ...headers, 'payment-signature': b64json(payment) }, body });
      return { status: res.status, body: (await res.json()) as Json };
    };
    /** Delivers every due write; the seller's store then holds what the newest write said. */
    const deliver = async () => {
      await worker.runOnce();
      const left = await db.accountWrite.count({ where: { status: { in: ['pending', 'delivering'] } } });
      if (left) throw new Error(`${left} writes not delivered`);
    };
    const emailAtSeller = async (accessId: string) => (await seller.store.get(accessId))?.buyerEmail;

    for (const variant of ['original', 'later'] as const) {
      await t.test(`${variant} variant`, async (t) => {
        const put = await api.put(`/v1/sellers/${sellerId}/stateful-access`, hub.apiKey, {
          stateful: true,
          accessEndpointUrl: seller.url,
          accountWriteVariant: variant,
        });
        t.equal(put.status, 200);
        const plans = {} as Record<'off' | 'requested' | 'required', string>;
        for (const policy of ['off', 'requested', 'required'] as const) {
          plans[policy] = await offerPlan({
            name: `Monthly ${policy}`,
            slug: `monthly-${policy}-${variant}`,
            billingMode: 'subscription',
            basePriceUsd: '1.00',
            verifiedEmailPolicy: policy,
          });
        }
        const agent = await registerAgent(hub, 'acme');
        const email = `erin-${variant}@example.com`;

        const refused = await buy(agent.token, plans.required);
        t.match(
          refused,
          { status: 401, body: { error: 'bearer_required', reason: /claimed by a human with a verified email/, auth: { claim: {} } } },
          'required: an unclaimed agent is refused before any payment is asked',
        );
        t.equal(await db.paymentAttempt.count({ where: { planId: plans.required } }), 0, 'no challenge was issued');

        const requested = await buy(agent.token, plans.requested);
        const off = await buy(agent.token, plans.off);
        t.match([requested.status, off.status], [201, 201], 'requested and off sell to an unclaimed agent');
        const [requestedId, offId] = [requested.body.account.accessId as string, off.body.account.accessId as string];
        await deliver();
        t.equal(await emailAtSeller(requestedId), null, 'requested: no email before a human claims the agent');
        t.equal(await emailAtSeller(offId), null);

        await claimAgent(smtp, url, agent.token, email);
        await deliver();
        t.equal(await emailAtSeller(requestedId), email, 'requested: the claim’s write carries the verified email');
        t.equal(await emailAtSeller(offId), null, 'off: never sent, even once claimed');
        if (variant === 'later') t.match(await seller.store.get(offId), { buyerId: /^byr_/ }, 'the buyer itself is no secret');

        const required = await buy(agent.token, plans.required);
        t.equal(required.status, 201, 'required: a claimed agent with a verified email buys');
        const requiredId = required.body.account.accessId as string;
        await deliver();
        t.equal(await emailAtSeller(requiredId), email, 'required: every write carries the email');

        if (variant === 'later') {
          // The later variant's mint names the buyer too: its email only as the plan allows.
          const mintEmail = async (accessId: string) => {
            const since = seller.requests.length;
            const res = await fetch(url(`/keys/redeem?accessId=${accessId}`), {
              method: 'POST',
              headers: { authorization: `Bearer ${agent.token}` },
            });
            t.equal(res.status, 200);
            return seller.requests.slice(since).find((r) => r.path.endsWith('/keys'))?.buyerEmail;
          };
          t.equal(await mintEmail(requestedId), email, 'a mint under requested names the email');
          t.equal(await mintEmail(offId), undefined, 'a mint under off does not');
        }
      });
    }
  });
}
