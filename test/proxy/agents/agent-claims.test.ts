import t from 'tap';
import { setStatefulFlags } from '../../../control-plane/catalog/sellers.js';
import { accountWriteBody, parseSnapshot } from '../../../control-plane/storefront/account-write.js';
import { registerAgent } from '../../helpers/agents.js';
import { seedPricedService } from '../../helpers/catalog-seed.js';
import { testProviders } from '../../helpers/database.js';
import { startTestHub } from '../../helpers/hub.js';
import { startTestSmtpServer } from '../../helpers/smtp-server.js';
import { sellerBehind, startTestUpstream } from '../../helpers/upstream.js';

// A human claims an agent, end to end: the agent asks on the pay URL, hub mails the human (a real
// SMTP server on loopback receives it), the link's page confirms on a button press, and the
// seller sees the buyer from the next call on. Then release, reuse, expiry, takeover and limits.

for (const provider of testProviders()) {
  t.test(`agent claims on ${provider}`, async (t) => {
    const smtp = await startTestSmtpServer(t);
    const hub = await startTestHub(t, provider, { HUB_SMTP_URL: smtp.url });
    const upstream = await startTestUpstream(t);
    const seller = await sellerBehind(hub, upstream);
    const db = hub.cp.db;

    const asAgent = (token: string, init: { method?: string; headers?: Record<string, string> } = {}) => ({
      ...init,
      headers: { authorization: `Bearer ${token}`, ...init.headers } as Record<string, string>,
    });
    const claim = (token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
      hub.pay('acme', '/agents/claim', {
        method: 'POST',
        body: typeof body === 'string' ? body : JSON.stringify(body),
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      });
    /** The links in the next mail to arrive, as paths on the pay URL. */
    const linksInNextMail = async (since: number) => {
      const mail = await smtp.nextMail(since);
      const [confirm, release] = [...(mail.text ?? '').matchAll(/http:\/\/acme\.pay\.localhost(\/agents\/claim\/\S+)/g)].map((m) => m[1]!);
      return { mail, confirm: confirm!, release: release! };
    };
    const echo = async (token: string, headers: Record<string, string> = {}) => {
      const res = await hub.pay('acme', '/echo', asAgent(token, { headers }));
      return { status: res.status, body: await res.text(), seen: upstream.seen.at(-1)! };
    };

    const alice = await registerAgent(hub, 'acme');

    await t.test('without an agent token: 401 with how to register and how to be claimed', async (t) => {
      const res = await claim(undefined, { email: 'human@example.com' });
      t.equal(res.status, 401);
      t.match(await res.json(), {
        error: 'bearer_required',
        auth: { challengeUrl: 'http://acme.pay.localhost/agents/challenge', claim: { url: 'http://acme.pay.localhost/agents/claim' } },
      });
      const unknown = await claim('hubagt_unknown', { email: 'human@example.com' });
      t.equal(unknown.status, 401, 'an unknown token stays bearer_required');
    });

    await t.test('bad input is a 400 naming the field, and sends nothing', async (t) => {
      const before = smtp.received.length;
      for (const body of [
        { email: 'not an email' },
        { email: '' },
        {},
        { email: 'a@b.example', extra: 1 },
        { email: `${'a'.repeat(250)}@x.example` },
      ]) {
        const res = await claim(alice.token, body);
        t.equal(res.status, 400, JSON.stringify(body).slice(0, 60));
        t.match(await res.json(), { error: 'invalid_request', reason: /email|extra|Unrecognized/i });
      }
      t.equal((await claim(alice.token, 'email=x', { 'content-type': 'text/plain' })).status, 415);
      t.equal((await hub.pay('acme', '/agents/claim', asAgent(alice.token))).status, 405, 'GET is not a claim');
      t.equal(smtp.received.length, before);
    });

    await t.test('free mode before any claim: 401 with the claim recipe, nothing forwarded', async (t) => {
      const before = upstream.seen.length;
      const res = await hub.pay('acme', '/echo', asAgent(alice.token, { headers: { 'hub-mode': 'free' } }));
      t.equal(res.status, 401);
      t.match(await res.json(), { error: 'bearer_required', reason: /claimed/, auth: { claim: { url: /\/agents\/claim$/ } } });
      t.equal(upstream.seen.length, before);
    });

    let aliceLinks: Awaited<ReturnType<typeof linksInNextMail>>;
    await t.test('claim → mail → page → confirm → the seller sees the buyer', async (t) => {
      const before = smtp.received.length;
      const res = await claim(alice.token, { email: 'Human@Example.com' });
      t.equal(res.status, 202);
      t.match(await res.json(), { status: 'pending', email: 'human@example.com', expiresAt: String, next: /human@example\.com/ });

      aliceLinks = await linksInNextMail(before);
      t.same(aliceLinks.mail.envelopeTo, ['human@example.com']);
      t.match(aliceLinks.mail.subject, alice.agentId);
      t.match(aliceLinks.mail.text, alice.walletAddress);
      t.match(aliceLinks.confirm, /^\/agents\/claim\/confirm\/hubclm_[0-9A-Za-z]{40}$/);
      t.match(aliceLinks.release, /^\/agents\/claim\/release\/hubrel_[0-9A-Za-z]{40}$/);

      const page = await hub.pay('acme', aliceLinks.confirm);
      t.equal(page.status, 200);
      t.match(page.headers.get('content-type'), /text\/html/);
      const html = await page.text();
      t.match(html, alice.agentId);
      t.match(html, alice.walletAddress);
      t.match(html, /<form method="post" action="\/agents\/claim\/confirm\/hubclm_/);
      t.notMatch(html, /<script/i, 'no script needed');
      t.notOk((await echo(alice.token)).seen.headers['hub-buyer-id'], 'opening the link (as a mail scanner would) confirms nothing');

      const confirmed = await hub.pay('acme', aliceLinks.confirm, { method: 'POST' });
      t.equal(confirmed.status, 200);
      t.match(await confirmed.text(), /The agent is yours/);
      const buyer = await db.buyer.findUniqueOrThrow({ where: { email: 'human@example.com' } });
      t.match(buyer.id, /^byr_/);
      t.ok(buyer.emailVerifiedAt, 'the email is verified');

      const call = await echo(alice.token);
      t.equal(call.status, 200);
      t.equal(call.seen.headers['hub-buyer-id'], buyer.id, 'the next call carries hub-buyer-id');
      t.same([call.seen.identity.agentId, call.seen.identity.buyerId], [alice.agentId, buyer.id], 'the SDK sees both ids');

      const free = await echo(alice.token, { 'hub-mode': 'free' });
      t.not(free.status, 401, 'free mode is served once claimed');
      t.equal(free.seen.headers['hub-buyer-id'], buyer.id);

      const again = await hub.pay('acme', aliceLinks.confirm, { method: 'POST' });
      t.equal(again.status, 410, 'the link works once');
      t.match(await again.text(), /already used/);
    });

    await t.test('a second agent of the same human shares its buyer; a stranger cannot take the first', async (t) => {
      const bob = await registerAgent(hub, 'acme');
      const before = smtp.received.length;
      t.equal((await claim(bob.token, { email: 'human@example.com' })).status, 202);
      const links = await linksInNextMail(before);
      t.equal((await hub.pay('acme', links.confirm, { method: 'POST' })).status, 200);
      const [a, b] = await Promise.all([alice, bob].map((x) => db.agent.findUniqueOrThrow({ where: { id: x.agentId } })));
      t.ok(a!.buyerId && a!.buyerId === b!.buyerId, 'one buyer owns both, so its accounts reach both');
      t.equal((await echo(bob.token)).seen.headers['hub-buyer-id'], a!.buyerId);

      const takeover = await claim(alice.token, { email: 'someone.else@example.com' });
      t.equal(takeover.status, 409);
      t.match(await takeover.json(), { error: 'agent_already_claimed' });
      const same = await claim(alice.token, { email: 'human@example.com' });
      t.equal(same.status, 200);
      t.match(await same.json(), { status: 'claimed' });
      t.equal(smtp.received.length, before + 1, 'no mail for either');
    });

    await t.test('what an agent bought before it was claimed becomes its owner’s, and reaches her other agents', async (t) => {
      const carol = await registerAgent(hub, 'acme');
      const { planId } = await seedPricedService(db, {
        organizationId: hub.organizationId,
        sellerId: seller.id,
        plan: { slug: 'credit', name: 'Credit', billingMode: 'credit' },
        priceMicros: 10_000n,
      });
      // A free trial with $1 of credit that requests the email (an unclaimed agent opens it; the
      // email follows the claim), opened by the unclaimed agent at the pay URL, at a stateful
      // seller (which hears of the claim in an account write).
      await db.plan.update({
        where: { id: planId },
        data: { kind: 'free_trial', includedCreditMicros: 1_000_000n, verifiedEmailPolicy: 'requested' },
      });
      await setStatefulFlags(db, seller.id, { sales: true });
      // Made stateful as PUT …/stateful-access {stateful: true} does (purchases.test.ts goes through the API).
      await db.seller.update({ where: { id: seller.id }, data: { stateful: true } });
      const opened = await hub.pay('acme', '/extend', {
        method: 'POST',
        body: JSON.stringify({ planId }),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${carol.token}` },
      });
      t.equal(opened.status, 201);
      const accessId = ((await opened.json()) as { account: { accessId: string } }).account.accessId;
      // As once the seller has applied its write (delivery/outcomes.ts › writesApplied;
      // held-purchases.test.ts delivers it): before that no call is allowed on the account.
      await db.access.update({
        where: { id: accessId },
        data: { provisioningState: 'active', unappliedCreditMicros: 0n, appliedPeriodEnd: null },
      });
      /** The seller's usage check for a call the agent makes now. */
      const checkOnCall = async (token: string) => {
        const { seen } = await echo(token);
        const res = await fetch(`${hub.cp.url}/v1/usage/check`, {
          method: 'POST',
          headers: { authorization: `Bearer ${hub.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            zcRequestId: seen.headers['hub-request-id'],
            serviceSlug: 'search',
            usage: [{ meterSlug: 'calls', quantity: 1 }],
          }),
        });
        return (await res.json()) as { allowed: boolean; reason: string | null };
      };
      t.match(await checkOnCall(carol.token), { allowed: true }, 'the agent draws on its own account');

      let before = smtp.received.length;
      await claim(carol.token, { email: 'carol@example.com' });
      await hub.pay('acme', (await linksInNextMail(before)).confirm, { method: 'POST' });
      const owner = (await db.agent.findUniqueOrThrow({ where: { id: carol.agentId } })).buyerId;
      t.match(owner, /^byr_/);
      t.equal((await db.access.findUniqueOrThrow({ where: { id: accessId } })).buyerId, owner, 'the account is now its owner’s');
      const writes = await db.accountWrite.findMany({ where: { accessId }, orderBy: { stateVersion: 'asc' } });
      t.same(
        writes.map((w) => w.stateVersion),
        [1, 2],
        'the claim raised the version and left a write',
      );
      t.match(accountWriteBody(parseSnapshot(writes[1]!.bodyJson), 'later'), {
        buyerId: owner,
        buyerEmail: 'carol@example.com',
        stateVersion: 2,
      });
      t.match(accountWriteBody(parseSnapshot(writes[0]!.bodyJson), 'later'), { buyerId: null, buyerEmail: null });

      const carolsOther = await registerAgent(hub, 'acme');
      t.match(await checkOnCall(carolsOther.token), { allowed: false, reason: 'access_not_found' }, 'a new agent has nothing of hers');
      before = smtp.received.length;
      await claim(carolsOther.token, { email: 'carol@example.com' });
      await hub.pay('acme', (await linksInNextMail(before)).confirm, { method: 'POST' });
      t.match(await checkOnCall(carolsOther.token), { allowed: true }, 'once she claims it too, it inherits her account');
      const again = await hub.pay('acme', '/extend', {
        method: 'POST',
        body: JSON.stringify({ planId }),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${carolsOther.token}` },
      });
      t.equal(again.status, 409, 'the trial her first agent took counts as hers');
      t.match(await again.json(), { error: 'trial_already_claimed' });
    });

    await t.test('release: the agent loses its owner at once', async (t) => {
      const page = await hub.pay('acme', aliceLinks.release);
      t.equal(page.status, 200);
      t.match(await page.text(), /<button type="submit">Release<\/button>/);
      t.ok((await echo(alice.token)).seen.headers['hub-buyer-id'], 'opening the release link changes nothing');
      const released = await hub.pay('acme', aliceLinks.release, { method: 'POST' });
      t.equal(released.status, 200);
      t.match(await released.text(), /released/);
      t.notOk((await echo(alice.token)).seen.headers['hub-buyer-id'], 'the very next call has no buyer');
      t.equal((await echo(alice.token, { 'hub-mode': 'free' })).status, 401, 'nor free mode');
      t.equal((await hub.pay('acme', aliceLinks.release, { method: 'POST' })).status, 200, 'releasing twice is harmless');
    });

    await t.test('expired and unknown links show a page saying so', async (t) => {
      const dave = await registerAgent(hub, 'acme');
      const before = smtp.received.length;
      await claim(dave.token, { email: 'dave@example.com' });
      const links = await linksInNextMail(before);
      // A day later (the link's lifetime), told to the database rather than waited for.
      await db.agentClaim.updateMany({ where: { agentId: dave.agentId }, data: { expiresAt: new Date(Date.now() - 1) } });
      for (const method of ['GET', 'POST']) {
        const res = await hub.pay('acme', links.confirm, { method });
        t.equal(res.status, 410, method);
        t.match(await res.text(), /expired/);
      }
      t.notOk((await db.agent.findUniqueOrThrow({ where: { id: dave.agentId } })).buyerId);
      for (const path of [
        '/agents/claim/confirm/hubclm_nope',
        `/agents/claim/confirm/hubclm_${'x'.repeat(40)}`,
        '/agents/claim/release/<script>',
      ]) {
        const res = await hub.pay('acme', path);
        t.equal(res.status, 404, path);
        const html = await res.text();
        t.match(html, /Unknown link/);
        t.notMatch(html, /<script>/);
      }
    });

    await t.test('claims are rate-limited per agent and per address', async (t) => {
      const erin = await registerAgent(hub, 'acme');
      for (let i = 0; i < 5; i++) t.equal((await claim(erin.token, { email: `erin${i}@example.com` })).status, 202);
      const limited = await claim(erin.token, { email: 'erin9@example.com' });
      t.equal(limited.status, 429);
      t.match(await limited.json(), { error: 'rate_limited', retryAfterSeconds: 3600 });

      const agents = await Promise.all([0, 1, 2, 3].map(() => registerAgent(hub, 'acme')));
      for (const agent of agents.slice(0, 3)) t.equal((await claim(agent.token, { email: 'popular@example.com' })).status, 202);
      const flooded = await claim(agents[3]!.token, { email: 'popular@example.com' });
      t.equal(flooded.status, 429, 'an address gets at most 3 claim mails an hour');
    });

    await t.test('claims sent at once keep the limits', async (t) => {
      const statuses = async (claims: Promise<Response>[]) => (await Promise.all(claims)).map((res) => res.status).sort();
      const crowd = await Promise.all(Array.from({ length: 8 }, () => registerAgent(hub, 'acme')));
      t.same(
        await statuses(crowd.map((agent) => claim(agent.token, { email: 'crowd@example.com' }))),
        [202, 202, 202, 429, 429, 429, 429, 429],
        'eight agents naming one address at once: three mails',
      );
      const eager = await registerAgent(hub, 'acme');
      t.same(
        await statuses(Array.from({ length: 8 }, (_, i) => claim(eager.token, { email: `eager${i}@example.com` }))),
        [202, 202, 202, 202, 202, 429, 429, 429],
        'one agent naming eight addresses at once: five asks',
      );
    });
  });
}

t.test('behind a trusted reverse proxy, claim mail links stay on the host the seller was found by', async (t) => {
  const smtp = await startTestSmtpServer(t);
  const hub = await startTestHub(t, 'sqlite', { HUB_SMTP_URL: smtp.url, HUB_TRUST_PROXY: 'on' });
  await sellerBehind(hub, await startTestUpstream(t));
  const agent = await registerAgent(hub, 'acme');
  const since = smtp.received.length;
  const res = await hub.pay('acme', '/agents/claim', {
    method: 'POST',
    body: JSON.stringify({ email: 'owner@example.com' }),
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${agent.token}`,
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'evil.example',
    },
  });
  t.equal(res.status, 202);
  const mail = await smtp.nextMail(since);
  t.notMatch(mail.text, /evil\.example/, 'a forwarded host nothing ties to the seller');
  t.match(mail.text, /https:\/\/acme\.pay\.localhost\/agents\/claim\/confirm\//, 'the forwarded scheme, the seller’s host');
});
