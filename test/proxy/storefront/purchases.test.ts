import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { evm, Mppx } from 'mppx/client';
import t from 'tap';
import { privateKeyToAccount } from 'viem/accounts';
import { setStatefulFlags } from '../../../control-plane/catalog/sellers.js';
import { accountWriteBody, parseSnapshot } from '../../../control-plane/storefront/account-write.js';
import { parseAccountWrite } from '../../../sdk/account/write-body.js';
import { createReplyKey, decryptReply, encryptRequest, fetchJwks } from '../../../sdk/encryption.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { registerAgent } from '../../helpers/agents.js';
import { tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { addEncryptionKey, craftJwe, jwksListing, retireEncryptionKey } from '../../helpers/encryption.js';
import { managementClient } from '../../helpers/management.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { signPayment } from '../../helpers/sign-payment.js';
import { startTestSmtpServer } from '../../helpers/smtp-server.js';

// Buying plans at the pay URL end to end (spec: Pay URL endpoints, Free plans): the unmodified
// x402 and mppx clients pay on a local chain, the seller serves calls its usage check allows, and
// every account is opened through the pay URL. No account or buyer is written by the test.

const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
type Json = Record<string, any>;

for (const provider of testProviders()) {
  t.test(`buying plans at the pay URL on ${provider}`, async (t) => {
    const smtp = await startTestSmtpServer(t);
    const world = await startPaidWorld(t, provider, { checkUsage: true, env: { HUB_SMTP_URL: smtp.url } });
    const { hub, chain, db, ids, payTo, payerKey, url, sellerId, checks } = world;
    const api = managementClient(hub.cp.url);
    const key = hub.apiKey;
    const created = async (path: string, body: unknown) => {
      const reply = await api.post(path, key, body);
      if (reply.status !== 201) throw new Error(`${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body;
    };
    const plan = async (body: Json, price?: Json) => {
      const { plan } = await created('/v1/plans', { serviceId: ids.service, ...body });
      if (price) await created('/v1/plan-meter-prices', { planId: plan.id, meterId: ids.meter, ...price });
      return plan.id as string;
    };
    // Credits: $0.25 a call, $0.50 included with every purchase, at least $1.00.
    const credits = await plan(
      { name: 'Credits', slug: 'credits', billingMode: 'credit', minimumPurchaseUsd: '1.00', includedCreditUsd: '0.50' },
      { priceUsd: '0.25' },
    );
    // Monthly: $2.00 a month, two calls included, none beyond.
    const monthly = await plan(
      { name: 'Monthly', slug: 'monthly', billingMode: 'subscription_usage', interval: 'month', basePriceUsd: '2.00' },
      { priceUsd: '0.00', includedUnits: 2 },
    );

    const agent = await registerAgent(hub, 'acme');
    const bearer = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
    const payer = privateKeyToAccount(payerKey);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: payer });
    client.setSpendControls({ allowedAssets: true });
    const x402Fetch = wrapFetchWithPayment(fetch, client);
    const mppx = Mppx.create({
      methods: [evm({ account: payer, authorization: { name: chain.token.name, version: chain.token.version } })],
      polyfill: false,
    });
    const extend = (body: Json, query = '', pay: typeof fetch = x402Fetch) =>
      pay(url(`/extend${query}`), { method: 'POST', headers: bearer, body: JSON.stringify(body) });
    const call = (path = '/search') => fetch(url(path), { headers: { authorization: `Bearer ${agent.token}` } });
    const receipt = async () => ((await (await fetch(url('/purchases/receipt'), { headers: bearer })).json()) as Json).purchases as Json[];

    await t.test('sales are off until the operator turns them on', async (t) => {
      const res = await extend({ planId: credits, amountUsd: '1.00' });
      t.equal(res.status, 501);
      t.match(await res.json(), { error: 'entitlements_not_available' });
      await setStatefulFlags(db, sellerId, { sales: true });
    });

    let creditAccess = '';
    await t.test('buy a credit plan with x402: paid on chain, the account opened', async (t) => {
      const before = { payer: await tokenBalance(chain, payer.address), payTo: await tokenBalance(chain, payTo) };
      const unpaid = await fetch(url('/extend'), {
        method: 'POST',
        headers: bearer,
        body: JSON.stringify({ planId: credits, amountUsd: '1.00' }),
      });
      t.equal(unpaid.status, 402);
      t.match(await unpaid.json(), {
        error: 'payment_required',
        reason: 'absent',
        zcAgentId: agent.agentId,
        zcRequestId: /^hubreq_/,
        serviceSlug: 'search',
        usage: [],
        plan: { id: credits, slug: 'credits', billingMode: 'credit' },
        payment: { id: /^apay_/, amountUsd: '1.000000', network: chain.network },
        accepts: [{ amount: '1000000', payTo }],
      });
      t.ok(unpaid.headers.get('www-authenticate')?.startsWith('Payment '), 'an MPP challenge beside x402’s');

      const res = await extend({ planId: credits, amountUsd: '1.00' });
      t.equal(res.status, 201);
      const body = (await res.json()) as Json;
      t.match(body, {
        status: 'active',
        account: {
          accessId: /^hubacc_/,
          status: 'active',
          provisioningState: 'active',
          deliveryStatus: null,
          agentId: agent.agentId,
          plan: { id: credits, billingMode: 'credit', interval: 'none' },
          period: { start: /Z$/, end: null },
          creditGrantedUsd: '1.500000',
          balanceUsd: '1.500000',
          stateVersion: 1,
          redeemUrl: url(`/keys/redeem?accessId=${body.account.accessId}`),
          topUpUrl: url(`/extend?accessId=${body.account.accessId}`),
        },
        payment: { amountUsd: '1.000000', status: 'settled', settleTransactionHash: /^0x[0-9a-f]{64}$/ },
      });
      t.ok(res.headers.get('payment-response'), 'the x402 settlement receipt');
      const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { accessId: body.account.accessId } });
      t.match(attempt, { status: 'settled', chargedMicros: 1_000_000n, remainderHandling: 'credited' }, 'nothing remains, as billed');
      t.equal(await tokenBalance(chain, payer.address), before.payer - 1_000_000n);
      t.equal(await tokenBalance(chain, payTo), before.payTo + 1_000_000n);
      creditAccess = body.account.accessId;
    });

    await t.test('calls draw on it until it runs out; usage_exhausted points to the top-up', async (t) => {
      for (let i = 0; i < 6; i++) {
        const res = await call();
        t.equal(res.status, 200, `call ${i + 1} is covered by the plan`);
        t.equal(res.headers.get('hub-billing'), null, 'no per-call payment');
        await res.arrayBuffer();
      }
      const [account] = (await receipt()).filter((p) => p.accessId === creditAccess);
      t.match(account, { balanceUsd: '0.000000', creditGrantedUsd: '1.500000' });
      const out = await call();
      t.equal(out.status, 402);
      t.match(await out.json(), {
        error: 'payment_required',
        reason: 'usage_exhausted',
        accessId: creditAccess,
        topUpUrl: url(`/extend?accessId=${creditAccess}`),
        manifestUrl: url('/manifest.json'),
        payment: { amountUsd: '0.010000' },
      });
      t.equal(checks.at(-1)?.reason, 'usage_exhausted');
    });

    await t.test('top up the account: credit added, version raised, calls served again', async (t) => {
      const res = await extend({ amountUsd: '1.00' }, `?accessId=${creditAccess}`);
      t.equal(res.status, 201);
      t.match(await res.json(), {
        account: { accessId: creditAccess, creditGrantedUsd: '2.500000', balanceUsd: '1.000000', stateVersion: 2 },
      });
      t.equal((await call()).status, 200);
    });

    let monthlyAccess = '';
    await t.test('buy a monthly subscription with mppx, then renew it: the end moves a month', async (t) => {
      const bought = await mppx.fetch(url('/extend'), { method: 'POST', headers: bearer, body: JSON.stringify({ planId: monthly }) });
      t.equal(bought.status, 201, 'the MPP credential replaces the bearer token; the payment names the agent');
      const first = ((await bought.json()) as Json).account;
      t.ok(bought.headers.get('payment-receipt'), 'the MPP receipt');
      const start = new Date(first.period.start);
      const end = new Date(first.period.end);
      t.equal(end.getUTCMonth(), (start.getUTCMonth() + 1) % 12, 'a month long');
      t.equal(first.agentId, agent.agentId);
      monthlyAccess = first.accessId;

      const renewed = await mppx.fetch(url(`/extend?accessId=${monthlyAccess}`), { method: 'POST', headers: bearer, body: '{}' });
      t.equal(renewed.status, 201);
      const second = ((await renewed.json()) as Json).account;
      t.equal(
        new Date(second.period.end).getUTCMonth(),
        (start.getUTCMonth() + 2) % 12,
        'renewed before its end: two months from the first start',
      );
      t.equal(second.stateVersion, 2);
    });

    await t.test('a period that ended: plan_expired at the usage check, access_not_found naming the renewal', async (t) => {
      // Time is moved, not state made: the period ends as if a month had passed.
      await db.access.update({ where: { id: monthlyAccess }, data: { periodEnd: new Date(Date.now() - 1000) } });
      // The seller cancels the credit account: its period ends now too.
      const canceled = await api.post(`/v1/accounts/${creditAccess}/cancel`, key);
      t.match(canceled, {
        status: 200,
        body: { account: { accessId: creditAccess, status: 'canceled', canceledAt: /Z$/, stateVersion: 3 } },
      });
      t.ok(new Date(canceled.body.account.period.end) <= new Date(), 'the period ends at the cancellation');
      t.match(
        (await api.post(`/v1/accounts/${creditAccess}/cancel`, key)).body,
        { account: { stateVersion: 3 } },
        'cancelling again changes nothing',
      );
      const res = await call();
      t.equal(res.status, 402);
      t.match(await res.json(), { reason: 'access_not_found', topUpUrl: /\/extend\?accessId=hubacc_/, payment: { amountUsd: '0.010000' } });
      t.match(checks.at(-1), { allowed: false, reason: 'plan_expired' });

      // Storage is priced by the credit plan only: no per-call price, but a plan to buy.
      const { meter } = await created('/v1/meters', { serviceId: ids.service, key: 'storage', unit: 'GB' });
      await created('/v1/plan-meter-prices', { planId: credits, meterId: meter.id, priceUsd: '0.10' });
      const unpriced = await call('/unpriced');
      t.equal(unpriced.status, 402);
      const body = (await unpriced.json()) as Json;
      t.match(body, {
        error: 'payment_required',
        reason: 'access_not_found',
        manifestUrl: url('/manifest.json'),
        purchaseUrl: url('/extend'),
      });
      t.notOk('payment' in body, 'nothing to pay per call');
      const anonymous = await fetch(url('/unpriced'));
      t.equal(anonymous.status, 409, 'an anonymous caller is told the usage has no per-call price');
      t.match(await anonymous.json(), { error: 'usage_not_priced' });
    });

    await t.test('refusals of the paid retry: another amount, another body, a replay', async (t) => {
      const challenge = await fetch(url('/extend'), {
        method: 'POST',
        headers: bearer,
        body: JSON.stringify({ planId: credits, amountUsd: '1.00' }),
      });
      const { accepts } = (await challenge.json()) as { accepts: PaymentRequirements[] };
      const payment = await signPayment(chain, payerKey, accepts[0]!);
      const retry = (body: string) =>
        fetch(url('/extend'), { method: 'POST', headers: { ...bearer, 'payment-signature': b64json(payment) }, body });
      const amount = await retry(JSON.stringify({ planId: credits, amountUsd: '2.00' }));
      t.equal(amount.status, 409);
      t.match(await amount.json(), { error: 'payment_amount_mismatch', reason: /amountUsd differs/ });
      const reordered = await retry(JSON.stringify({ amountUsd: '1.00', planId: credits }));
      t.equal(reordered.status, 409);
      t.same(await reordered.json(), { error: 'payment_request_mismatch' });
      const ok = await retry(JSON.stringify({ planId: credits, amountUsd: '1.00' }));
      t.equal(ok.status, 201);
      const again = await retry(JSON.stringify({ planId: credits, amountUsd: '1.00' }));
      t.equal(again.status, 409);
      t.same(await again.json(), { error: 'payment_request_already_completed' });
    });

    await t.test('concurrent top-ups of one account and purchases of one plan: exactly what was paid', async (t) => {
      const challenges = [];
      for (let i = 0; i < 4; i++) {
        const res = await fetch(url(`/extend?accessId=${creditAccess}`), { method: 'POST', headers: bearer, body: '{"amountUsd":"1.00"}' });
        challenges.push(((await res.json()) as { accepts: PaymentRequirements[] }).accepts[0]!);
      }
      const before = await db.access.findUniqueOrThrow({ where: { id: creditAccess } });
      const payments = await Promise.all(challenges.map((r) => signPayment(chain, payerKey, r)));
      const answers = await Promise.all(
        payments.map((p) =>
          fetch(url(`/extend?accessId=${creditAccess}`), {
            method: 'POST',
            headers: { ...bearer, 'payment-signature': b64json(p) },
            body: '{"amountUsd":"1.00"}',
          }),
        ),
      );
      t.same(
        answers.map((a) => a.status),
        [201, 201, 201, 201],
      );
      const after = await db.access.findUniqueOrThrow({ where: { id: creditAccess } });
      t.equal(after.balanceMicros - before.balanceMicros, 4_000_000n, 'four top-ups, four dollars');
      t.equal(after.stateVersion - before.stateVersion, 4);
      // The account was canceled, its period ended: topped up, it is active with a period again.
      t.match(after, { status: 'active', canceledAt: null });
      t.ok(after.periodEnd === null || after.periodEnd > new Date(), 'its period runs again: the credit bought can be used');

      const held = (await receipt()).length;
      const bought = await Promise.all([1, 2, 3].map(() => extend({ planId: monthly })));
      t.same(
        bought.map((b) => b.status),
        [201, 201, 201],
      );
      t.equal((await receipt()).length, held + 3, 'three purchases, three accounts');
    });

    await t.test('free trials under each email policy', async (t) => {
      const trial = (policy: string, extra: Json = {}) =>
        plan(
          {
            name: `Trial ${policy}`,
            slug: `trial-${policy}`,
            kind: 'free_trial',
            billingMode: 'subscription_usage',
            interval: 'month',
            verifiedEmailPolicy: policy,
            ...extra,
          },
          { priceUsd: '0.00', includedUnits: 1 },
        );
      const required = await trial('required');
      const requested = await trial('requested', { maxClaims: 1 });
      const off = await trial('off');

      const refused = await extend({ planId: required });
      t.equal(refused.status, 401, 'required: an unclaimed agent is told to get claimed');
      t.match(await refused.json(), { error: 'bearer_required', auth: { claim: { url: /\/agents\/claim$/ } } });

      const opened = await extend({ planId: requested });
      t.equal(opened.status, 201, 'requested: an unclaimed agent opens it, without payment');
      t.match(await opened.json(), { account: { plan: { id: requested }, buyerId: null }, payment: null });
      const twice = await extend({ planId: requested });
      t.equal(twice.status, 409);
      t.match(await twice.json(), { error: 'trial_already_claimed' });
      const other = await registerAgent(hub, 'acme');
      const full = await fetch(url('/extend'), {
        method: 'POST',
        headers: { ...bearer, authorization: `Bearer ${other.token}` },
        body: JSON.stringify({ planId: requested }),
      });
      t.equal(full.status, 409, 'maxClaims 1: the plan has opened its one trial');
      t.match(await full.json(), { error: 'trial_claims_exhausted' });

      t.equal((await extend({ planId: off })).status, 201, 'off: nothing asked');

      // A human claims an agent through the pay URL and the link mailed to her.
      const claimed = await registerAgent(hub, 'acme');
      const mailed = smtp.received.length;
      const asked = await fetch(url('/agents/claim'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${claimed.token}` },
        body: JSON.stringify({ email: 'dana@example.com' }),
      });
      t.equal(asked.status, 202);
      const link = /http:\/\/acme\.pay\.localhost(?::\d+)?(\/agents\/claim\/confirm\/\S+)/.exec(
        (await smtp.nextMail(mailed)).text ?? '',
      )![1]!;
      t.equal((await fetch(url(link), { method: 'POST' })).status, 200);
      const buyerId = (await db.agent.findUniqueOrThrow({ where: { id: claimed.agentId } })).buyerId;
      const viaHuman = await fetch(url('/extend'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${claimed.token}` },
        body: JSON.stringify({ planId: required }),
      });
      t.equal(viaHuman.status, 201, 'required: a claimed agent with a verified email opens it');
      t.match(await viaHuman.json(), { account: { buyerId: /^byr_/ } });

      // A $0 plan that is not a trial always asks for a verified email (spec: Free plans).
      const zero = await plan({ name: 'Hobby', slug: 'hobby', billingMode: 'subscription', basePriceUsd: '0', verifiedEmailPolicy: 'off' });
      const unclaimed = await extend({ planId: zero });
      t.equal(unclaimed.status, 401, 'a $0 plan is for verified humans, whatever its policy says');
      t.match(await unclaimed.json(), { error: 'bearer_required', auth: { claim: {} } });
      const hobby = await fetch(url('/extend'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${claimed.token}` },
        body: JSON.stringify({ planId: zero }),
      });
      t.equal(hobby.status, 201);
      t.match(await hobby.json(), { account: { plan: { slug: 'hobby' }, period: { end: /Z$/ } }, payment: null });
      t.match(buyerId, /^byr_/);
    });

    await t.test('the receipt lists every account the agent holds, with its links', async (t) => {
      const purchases = await receipt();
      const slugs = purchases.map((p) => p.plan.slug).sort();
      t.same(slugs, ['credits', 'credits', 'monthly', 'monthly', 'monthly', 'monthly', 'trial-off', 'trial-requested']);
      for (const p of purchases) {
        t.match(p, {
          accessId: /^hubacc_/,
          provisioningState: 'active',
          deliveryStatus: null,
          redeemUrl: /\/keys\/redeem\?accessId=/,
          topUpUrl: /\/extend\?accessId=/,
        });
      }
    });

    await t.test('the seller lists and reads its accounts through the management API', async (t) => {
      const list = await api.get(`/v1/accounts?sellerId=${sellerId}`, key);
      t.equal(list.status, 200);
      t.equal(list.body.accounts.length, 10, 'the agent’s eight and the claimed agent’s two');
      t.match(await api.get(`/v1/accounts/${creditAccess}`, key), {
        status: 200,
        body: { account: { accessId: creditAccess, agentId: agent.agentId, status: 'active', plan: { slug: 'credits' } } },
      });
      t.match(await api.get('/v1/accounts/hubacc_000000000000000000000000', key), { status: 404, body: { error: 'access_not_found' } });
      t.match(await api.get('/v1/accounts/nope', key), { status: 400 });
    });

    await t.test('a stateful seller: the payment is reserved, the account write waits in the outbox', async (t) => {
      const put = await api.put(`/v1/sellers/${sellerId}/stateful-access`, key, { stateful: true });
      t.match(put, { status: 200, body: { stateful: true, salesEnabled: true } });
      t.match((await api.get(`/v1/sellers/${sellerId}/stateful-access?variant=later`, key)).body, { stateful: true });
      const before = await tokenBalance(chain, payTo);
      const res = await extend({ planId: credits, amountUsd: '1.00' });
      t.equal(res.status, 201);
      const body = (await res.json()) as Json;
      t.match(body, {
        status: 'pending',
        account: { provisioningState: 'pending', deliveryStatus: 'pending' },
        payment: { status: 'reserved', settleTransactionHash: null },
      });
      t.equal(res.headers.get('payment-response'), null, 'nothing settled');
      t.equal(await tokenBalance(chain, payTo), before, 'no tokens moved');
      const write = await db.accountWrite.findFirstOrThrow({ where: { accessId: body.account.accessId } });
      t.match(write, { kind: 'write', stateVersion: 1, status: 'pending' });
      for (const variant of ['original', 'later'] as const) {
        const parsed = parseAccountWrite(accountWriteBody(parseSnapshot(write.bodyJson), variant));
        t.match(
          parsed,
          {
            ok: true,
            value: {
              variant,
              accessId: body.account.accessId,
              agentId: agent.agentId,
              stateVersion: 1,
              creditGrantedMicros: 1_500_000n,
              status: 'active',
            },
          },
          `the SDK reads the ${variant} variant`,
        );
      }
      await api.put(`/v1/sellers/${sellerId}/stateful-access`, key, { stateful: false });
    });

    await t.test('credit units: calls draw the plan’s units before its credit, and the receipt counts them', async (t) => {
      // Four calls a month in units, then $0.25 a call from credit.
      const units = await plan(
        {
          name: 'Units',
          slug: 'units',
          billingMode: 'credit',
          interval: 'month',
          minimumPurchaseUsd: '1.00',
          includedCreditUnits: 4,
          includedCreditUnitLabel: 'calls',
        },
        { priceUsd: '0.25' },
      );
      const buyer = await registerAgent(hub, 'acme');
      const auth = { authorization: `Bearer ${buyer.token}` };
      const bought = await x402Fetch(url('/extend'), {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ planId: units, amountUsd: '1.00' }),
      });
      t.equal(bought.status, 201);
      const { account } = (await bought.json()) as Json;
      t.match(account, { balanceUsd: '1.000000', creditUnits: { label: 'calls', includedUnits: 4, usedUnits: 0 } });
      const mine = async () => ((await (await fetch(url('/purchases/receipt'), { headers: auth })).json()) as Json).purchases[0];

      const served = async (path: string) => {
        const res = await fetch(url(path), { headers: auth });
        await res.arrayBuffer();
        return res.status;
      };
      t.equal(await served('/twice'), 200, 'three calls from the units');
      t.match(await mine(), { balanceUsd: '1.000000', creditUnits: { usedUnits: 3 } });
      t.equal(await served('/twice'), 200, 'the last unit, then two calls from credit');
      t.match(await mine(), { balanceUsd: '0.500000', creditUnits: { usedUnits: 4 } });
      t.match((await api.get(`/v1/accounts/${account.accessId}`, key)).body.account, {
        balanceUsd: '0.500000',
        creditUnits: { label: 'calls', includedUnits: 4, usedUnits: 4 },
      });
    });

    await t.test('an encrypted purchase: a JWE body, paid by the unmodified x402 client, the account back encrypted', async (t) => {
      const kid = await addEncryptionKey(api, key, sellerId);
      const jwks = await jwksListing(() => fetchJwks(url('/')), [kid]);
      const replyKey = await createReplyKey();
      const jose = { authorization: bearer.authorization, 'content-type': 'application/jose' };
      const refused = await fetch(url('/extend'), {
        method: 'POST',
        headers: jose,
        body: await craftJwe(jwks.keys[0]!, { kid: 'hjwk_000000000000000000000000', reply_jwk: replyKey.publicJwk }),
      });
      t.match([refused.status, await refused.json()], [400, { error: 'unknown_jwe_kid' }], 'refused before any challenge');

      const body = await encryptRequest(jwks, JSON.stringify({ planId: credits, amountUsd: '1.00' }), {
        replyKey,
        contentType: 'application/json',
      });
      const before = await tokenBalance(chain, payTo);
      const res = await x402Fetch(url('/extend'), { method: 'POST', headers: jose, body });
      t.equal(res.status, 201);
      t.equal(res.headers.get('content-type'), 'application/jose');
      t.ok(res.headers.get('payment-response'), 'the receipt stays outside the encryption');
      const opened = JSON.parse(new TextDecoder().decode((await decryptReply(await res.text(), replyKey)).plaintext));
      t.match(opened, {
        status: 'active',
        account: { accessId: /^hubacc_/, plan: { id: credits }, balanceUsd: '1.500000' },
        payment: { amountUsd: '1.000000', status: 'settled' },
      });
      t.equal(await tokenBalance(chain, payTo), before + 1_000_000n, 'paid once, for the JWE as sent');
      await retireEncryptionKey(api, key, sellerId, kid);
      await jwksListing(() => fetchJwks(url('/')), []);
    });
  });
}
