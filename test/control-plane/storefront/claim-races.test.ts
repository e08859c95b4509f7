import t from 'tap';
import { registerAgent } from '../../helpers/agents.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { rowLocks, underWay, until } from '../../helpers/row-locks.js';
import { startTestSmtpServer } from '../../helpers/smtp-server.js';
import { x402Fetch } from '../../helpers/x402-agent.js';

// A human confirming the claim of an agent while that agent opens a free trial or buys a plan.
// Whichever commits first, the new account is the human's and a trial counts as hers: her other
// agents cannot take it again. On PostgreSQL another connection holds a row each side needs, so
// both get as far as they can; released together, they race for real. SQLite runs one
// transaction at a time, and the two go at once.

type Json = Record<string, any>;

for (const provider of testProviders()) {
  t.test(`a claim and a purchase at once on ${provider}`, async (t) => {
    const smtp = await startTestSmtpServer(t);
    const world = await startPaidWorld(t, provider, { env: { HUB_SMTP_URL: smtp.url } });
    const { hub, db, api, ids } = world;
    const trial = async (slug: string) => {
      const planId = await world.offerPlan({
        name: slug,
        slug,
        kind: 'free_trial',
        billingMode: 'subscription_usage',
        interval: 'month',
        verifiedEmailPolicy: 'off',
      });
      const price = await api.post('/v1/plan-meter-prices', hub.apiKey, { planId, meterId: ids.meter, priceUsd: '0.00', includedUnits: 1 });
      t.equal(price.status, 201);
      return planId;
    };
    const post = (path: string, token?: string, body?: unknown) =>
      hub.pay('acme', path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    /** The agent asks to be claimed by a human: the confirmation link mailed to her. */
    const confirmLink = async (token: string, email = 'human@example.com') => {
      const since = smtp.received.length;
      t.equal((await post('/agents/claim', token, { email })).status, 202);
      return /http:\/\/acme\.pay\.localhost(?::\d+)?(\/agents\/claim\/confirm\/\S+)/.exec((await smtp.nextMail(since)).text ?? '')![1]!;
    };
    const open = async (token: string, planId: string) => {
      const res = await post('/extend', token, { planId });
      return { status: res.status, body: (await res.json()) as Json };
    };

    // An agent the human claimed before: it shares whatever becomes hers.
    const hers = await registerAgent(hub, 'acme');
    t.equal((await post(await confirmLink(hers.token))).status, 200);
    const humanId = (await db.agent.findUniqueOrThrow({ where: { id: hers.agentId } })).buyerId;

    const locks = provider === 'postgresql' ? await rowLocks(t, hub.cp.config.database) : undefined;
    /**
     * Starts `first`, which waits at `waitingStatement` for a row another connection holds (on
     * PostgreSQL: `hold` takes it), then `second`, which either finishes or waits for `first` on
     * the agent's row; then lets both go. SQLite runs one transaction at a time: both go at once.
     */
    const race = async (
      hold: () => Promise<() => Promise<void>>,
      waitingStatement: string,
      first: () => Promise<Response>,
      second: () => Promise<Response>,
    ) => {
      if (!locks) return Promise.all([first(), second()]);
      const release = await hold();
      const one = underWay(first());
      await until(async () => (await locks.waiting(waitingStatement)) > 0, `${waitingStatement} waiting`);
      const two = underWay(second());
      await until(async () => two.answered || (await locks.waiting('"Agent"')) > 0, 'the second answered or waiting for the first');
      await release();
      return Promise.all([one.response, two.response]);
    };
    const holding = (table: string, id: string) => () => locks!.hold(table, 'id', id);

    await t.test('the purchase first: it has read the agent’s owner when the claim comes', async (t) => {
      const planId = await trial('trial-purchase-first');
      const agent = await registerAgent(hub, 'acme');
      const link = await confirmLink(agent.token);
      // The seller's row is held: the purchase's new account waits on it, its owner read already.
      const [opened, confirmed] = await race(
        holding('Seller', world.sellerId),
        'INSERT INTO "public"."Access"',
        () => post('/extend', agent.token, { planId }),
        () => post(link),
      );
      t.equal(opened!.status, 201);
      t.equal(confirmed!.status, 200);
      const { account } = (await opened!.json()) as Json;
      t.equal((await db.access.findUniqueOrThrow({ where: { id: account.accessId } })).buyerId, humanId, 'the account is the human’s');
      t.match(await open(hers.token, planId), { status: 409, body: { error: 'trial_already_claimed' } }, 'and so is the trial');
    });

    await t.test('the claim first: it is adopting the agent’s accounts when the purchase comes', async (t) => {
      const [earlier, planId] = [await trial('trial-earlier'), await trial('trial-claim-first')];
      const agent = await registerAgent(hub, 'acme');
      const before = await open(agent.token, earlier);
      t.equal(before.status, 201);
      const link = await confirmLink(agent.token);
      // The agent's earlier account is held: the claim waits on it, the agent's row written already.
      const [confirmed, opened] = await race(
        holding('Access', before.body.account.accessId),
        'UPDATE "public"."Access"',
        () => post(link),
        () => post('/extend', agent.token, { planId }),
      );
      t.equal(confirmed!.status, 200);
      t.equal(opened!.status, 201);
      const { account } = (await opened!.json()) as Json;
      t.equal(account.buyerId, humanId, 'the account is the human’s');
      t.match(await open(hers.token, planId), { status: 409, body: { error: 'trial_already_claimed' } }, 'and so is the trial');
      const held = (
        (await (await hub.pay('acme', '/purchases/receipt', { headers: { authorization: `Bearer ${hers.token}` } })).json()) as Json
      ).purchases as Json[];
      t.ok(
        held.some((p) => p.accessId === account.accessId),
        'her other agent holds it too',
      );
    });

    await t.test('a paid purchase first: paid, it has read the agent’s owner when the claim comes', async (t) => {
      const planId = await world.offerPlan({
        name: 'Monthly',
        slug: 'monthly',
        billingMode: 'subscription',
        interval: 'month',
        basePriceUsd: '1.00',
      });
      const agent = await registerAgent(hub, 'acme');
      // Another human: an address is mailed three claim links an hour.
      const link = await confirmLink(agent.token, 'buyer@example.com');
      // Once the challenge is out, the plan's row is held: the paid purchase's new account waits on
      // it, its owner read already.
      let release = async () => {};
      const pay = x402Fetch(world.payerKey, async (input, init) => {
        const res = await fetch(input, init);
        if (res.status === 402 && locks) release = await locks.hold('Plan', 'id', planId);
        return res;
      });
      const [opened, confirmed] = await race(
        async () => () => release(),
        'INSERT INTO "public"."Access"',
        () =>
          pay(world.url('/extend'), {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
            body: JSON.stringify({ planId }),
          }),
        () => post(link),
      );
      t.equal(confirmed!.status, 200);
      t.equal(opened!.status, 201);
      const buyer = await db.buyer.findUniqueOrThrow({ where: { email: 'buyer@example.com' } });
      const { account, payment } = (await opened!.json()) as Json;
      t.match(payment, { status: 'settled' });
      t.equal((await db.access.findUniqueOrThrow({ where: { id: account.accessId } })).buyerId, buyer.id, 'the account is the human’s');
    });
  });
}
