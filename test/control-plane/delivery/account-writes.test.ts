import pino from 'pino';
import t from 'tap';
import { setStatefulFlags } from '../../../control-plane/catalog/sellers.js';
import { AccountWriteWorker } from '../../../control-plane/delivery/account-write-worker.js';
import { redeemKey } from '../../../control-plane/delivery/key-mint.js';
import { resolveWithSystem, UpstreamAddresses } from '../../../runtime/upstream-addresses.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { FAST_DELIVERY, startAccountReceiver } from '../../helpers/account-receiver.js';
import { registerAgent } from '../../helpers/agents.js';
import { tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { signPayment } from '../../helpers/sign-payment.js';

// Account writes delivered to a stateful seller's endpoint, the SDK's (spec: Seller account
// endpoint, Limits, States and transitions): applied → the reserved payment captured; every fault
// the limits name; a newer write superseding an older one. The schedule is shortened so no test
// waits minutes; schedule.test.ts checks the real one's numbers.

const FAST = FAST_DELIVERY;
const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until a row is due; a timer may fire a millisecond before the clock reads its deadline. */
const untilDue = (row: { nextAttemptAt: Date }) => pause(Math.max(0, row.nextAttemptAt.getTime() - Date.now()) + 5);

for (const provider of testProviders()) {
  t.test(`account writes on ${provider}`, async (t) => {
    const { hub, chain, db, api, payTo, payerKey, url, sellerId, rail, secretOf, offerPlan, becomeStateful } = await startPaidWorld(
      t,
      provider,
    );
    // The seller's endpoint knows hub's secrets, until a test has it hold only the ones it was handed.
    const handed = new Map<string, string>();
    let onlyHanded = false;
    const receiver = await startAccountReceiver(t, (kid) => (onlyHanded ? handed.get(kid) : secretOf(kid)));
    await becomeStateful(receiver.url);
    const plan = { id: await offerPlan({ name: 'Credits', slug: 'credits', billingMode: 'credit', minimumPurchaseUsd: '1.00' }) };
    const agent = await registerAgent(hub, 'acme');
    const worker = new AccountWriteWorker(db, hub.cp.masterKey, { live: rail }, pino({ level: 'silent' }), {
      schedule: FAST,
      pollMs: 60_000,
    });

    /** Buys $1 of credit (or tops up `accessId`) and returns the account. */
    const buy = async (accessId?: string, token = agent.token) => {
      const target = url(`/extend${accessId ? `?accessId=${accessId}` : ''}`);
      const body = JSON.stringify(accessId ? { amountUsd: '1.00' } : { planId: plan.id, amountUsd: '1.00' });
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const challenge = await fetch(target, { method: 'POST', headers, body });
      const requirements = ((await challenge.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
      const payment = await signPayment(chain, payerKey, requirements);
      const res = await fetch(target, { method: 'POST', headers: { ...headers, 'payment-signature': b64json(payment) }, body });
      const answer = (await res.json()) as { account: { accessId: string }; payment: { id: string; status: string } };
      t.equal(res.status, 201);
      return answer;
    };
    const writeOf = (accessId: string, stateVersion: number) =>
      db.accountWrite.findUniqueOrThrow({ where: { accessId_kind_stateVersion: { accessId, kind: 'write', stateVersion } } });
    /** Runs passes until the write leaves `pending`/`delivering` (or `passes` run out). */
    const drain = async (accessId: string, stateVersion: number, passes = 20) => {
      for (let i = 0; i < passes; i++) {
        await worker.runOnce();
        const row = await writeOf(accessId, stateVersion);
        if (row.status !== 'pending' && row.status !== 'delivering') return row;
        await untilDue(row);
      }
      return writeOf(accessId, stateVersion);
    };

    await t.test('applied: the seller has the account, the payment is captured', async (t) => {
      const before = await tokenBalance(chain, payTo);
      const { account, payment } = await buy();
      t.equal(payment.status, 'reserved');
      t.equal(await tokenBalance(chain, payTo), before, 'nothing moves before the seller has the account');
      const row = await drain(account.accessId, 1);
      t.match(row, { status: 'applied', attempts: 1, lastHttpStatus: 200, deliveredAt: Date });
      const stored = await receiver.store.get(account.accessId);
      t.match(stored, { accessId: account.accessId, agentId: agent.agentId, stateVersion: 1, status: 'active' });
      t.match(await db.access.findUniqueOrThrow({ where: { id: account.accessId } }), { provisioningState: 'active' });
      t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: payment.id } }), { status: 'settled', settleTxHash: /^0x/ });
      t.equal(await tokenBalance(chain, payTo), before + 1_000_000n, 'captured once applied');
      t.equal(await worker.runOnce(), 0, 'nothing more is due');
    });

    await t.test('retried: down, 503, 429 with Retry-After, an unparseable 200, too slow; then applied', async (t) => {
      const { account } = await buy();
      for (const mode of [
        { kind: 'hangup' },
        { kind: 'status', status: 503 },
        { kind: 'status', status: 429, retryAfter: '0' },
        { kind: 'garbage' },
        { kind: 'sleep', sleepMs: 600 },
      ] as const) {
        receiver.mode = mode;
        await worker.runOnce();
        const row = await writeOf(account.accessId, 1);
        t.equal(row.status, 'pending', `${JSON.stringify(mode)}: tried again later`);
        t.ok(row.lastError, 'with the reason');
        await untilDue(row);
      }
      receiver.mode = { kind: 'sdk' };
      const row = await drain(account.accessId, 1);
      t.match(row, { status: 'applied', attempts: 6 });
    });

    await t.test('a Retry-After hint is honoured, capped', async (t) => {
      const { account } = await buy();
      receiver.mode = { kind: 'status', status: 503, retryAfter: '3600' };
      const before = Date.now();
      await worker.runOnce();
      const row = await writeOf(account.accessId, 1);
      t.ok(row.nextAttemptAt.getTime() - before >= 250 && row.nextAttemptAt.getTime() - before <= 1_000, 'an hour, capped to the schedule');
      receiver.mode = { kind: 'sdk' };
      t.match(await drain(account.accessId, 1), { status: 'applied' });
    });

    await t.test('provisioning: the same write again after the hint', async (t) => {
      const { account } = await buy();
      receiver.mode = { kind: 'sdk', lifecycle: { lifecycle: 'provisioning', retryAfterSeconds: 0 } };
      await worker.runOnce();
      t.match(await writeOf(account.accessId, 1), { status: 'pending', lastHttpStatus: 200 });
      t.match(await db.access.findUniqueOrThrow({ where: { id: account.accessId } }), { provisioningState: 'provisioning' });
      receiver.mode = { kind: 'sdk' };
      t.match(await drain(account.accessId, 1), { status: 'applied' });
      const seen = receiver.requests.filter((r) => r.requestId === `${account.accessId}:1`);
      t.equal(seen.length, 2, 'the same request id both times');
    });

    for (const [label, mode] of [
      ['a 400', { kind: 'status', status: 400 }],
      ['a redirect, never followed', { kind: 'redirect' }],
    ] as const) {
      await t.test(`failed at once on ${label}: the held payment is returned`, async (t) => {
        const before = await tokenBalance(chain, payTo);
        const { account, payment } = await buy();
        receiver.mode = mode;
        const row = await drain(account.accessId, 1);
        t.match(row, { status: 'failed', attempts: 1, lastError: /answered (400|307)/ });
        t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: payment.id } }), {
          status: 'released',
          chargedMicros: 0n,
          refundTxHash: /^0x[0-9a-f]{64}$/,
        });
        t.match(await db.access.findUniqueOrThrow({ where: { id: account.accessId } }), {
          provisioningState: 'failed',
          status: 'suspended',
        });
        t.equal(await tokenBalance(chain, payTo), before, 'nothing settled');
        receiver.mode = { kind: 'sdk' };
        // Paying again resumes it (held-purchases.test.ts walks that): a top-up is offered its price.
        const topUp = await fetch(url(`/extend?accessId=${account.accessId}`), {
          method: 'POST',
          headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ amountUsd: '1.00' }),
        });
        t.match([topUp.status, await topUp.json()], [402, { error: 'payment_required' }], 'a top-up is asked to pay');
        t.match(await db.access.findUniqueOrThrow({ where: { id: account.accessId } }), { status: 'suspended' });
      });
    }

    await t.test('a seller that provisions for ever is given up on: provisioning replies count as attempts', async (t) => {
      const { account, payment } = await buy();
      receiver.mode = { kind: 'sdk', lifecycle: { lifecycle: 'provisioning', retryAfterSeconds: 0 } };
      const row = await drain(account.accessId, 1, FAST.maxAttempts + 4);
      t.match(row, { status: 'failed', attempts: FAST.maxAttempts, lastError: /still provisioning; gave up after/ });
      t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: payment.id } }), { status: 'released' });
      receiver.mode = { kind: 'sdk' };
    });

    await t.test('a payment captured for an account the seller never took is owed back', async (t) => {
      await api.put(`/v1/sellers/${sellerId}/stateful-access`, hub.apiKey, { stateful: false });
      const { account, payment } = await buy();
      t.equal(payment.status, 'settled', 'not stateful yet: settled at once');
      await api.put(`/v1/sellers/${sellerId}/stateful-access`, hub.apiKey, { stateful: true });
      await api.post(`/v1/accounts/${account.accessId}/cancel`, hub.apiKey);
      receiver.mode = { kind: 'status', status: 403 };
      t.match(await drain(account.accessId, 2), { status: 'failed' });
      receiver.mode = { kind: 'sdk' };
      t.equal((await db.paymentAttempt.findUniqueOrThrow({ where: { id: payment.id } })).status, 'refund_owed');
      t.match(await api.get(`/v1/accounts/${account.accessId}`, hub.apiKey), {
        body: { account: { refundOwedUsd: '1.000000', provisioningState: 'failed' } },
      });
    });

    await t.test('given up after the attempts run out; the seller sees it and re-sends it', async (t) => {
      const { account, payment } = await buy();
      receiver.mode = { kind: 'status', status: 502, body: '{"error":"upstream down"}' };
      const row = await drain(account.accessId, 1, 40);
      t.match(row, { status: 'failed', attempts: FAST.maxAttempts, lastError: /gave up after 6 attempts/ });
      t.equal((await db.paymentAttempt.findUniqueOrThrow({ where: { id: payment.id } })).status, 'released');
      receiver.mode = { kind: 'sdk' };

      const listed = await api.get(`/v1/account-writes?sellerId=${sellerId}`, hub.apiKey);
      t.equal(listed.status, 200);
      t.match(
        listed.body.accountWrites.find((w: { accessId: string }) => w.accessId === account.accessId),
        {
          id: /^awr_/,
          stateVersion: 1,
          status: 'failed',
          attempts: 6,
          nextAttemptAt: null,
          lastHttpStatus: 502,
          lastReply: '{"error":"upstream down"}',
        },
      );
      const resent = await api.post(`/v1/account-writes/${row.id}/resend`, hub.apiKey);
      t.match(resent, { status: 200, body: { accountWrite: { status: 'pending', attempts: 0, nextAttemptAt: /Z$/ } } });
      t.match(await drain(account.accessId, 1), { status: 'applied', attempts: 1 });
      t.match(await api.post(`/v1/account-writes/${row.id}/resend`, hub.apiKey), {
        status: 409,
        body: { error: 'account_write_not_failed' },
      });
      t.match(
        await db.access.findUniqueOrThrow({ where: { id: account.accessId } }),
        { provisioningState: 'active', status: 'suspended' },
        'the seller has the account, but its payment went back to the payer: suspended until paid again',
      );
      t.equal(
        (await db.paymentAttempt.findUniqueOrThrow({ where: { id: payment.id } })).status,
        'released',
        'a released payment stays released',
      );
    });

    await t.test('a newer write supersedes an older one not yet delivered; the seller gets the newest', async (t) => {
      const { account } = await buy();
      await buy(account.accessId);
      await worker.runOnce();
      t.equal((await writeOf(account.accessId, 2)).status, 'applied');
      await worker.runOnce();
      t.equal((await writeOf(account.accessId, 1)).status, 'superseded', 'version 1 is never sent after version 2');
      t.equal(receiver.requests.filter((r) => r.requestId === `${account.accessId}:1`).length, 0);
      t.match(await receiver.store.get(account.accessId), { stateVersion: 2 });
      const captured = await db.paymentAttempt.findMany({ where: { accessId: account.accessId } });
      t.same(
        captured.map((p) => p.status),
        ['settled', 'settled'],
        'both payments captured',
      );
    });

    await t.test('the later variant: buyer id and email in the body and the headers', async (t) => {
      await api.put(`/v1/sellers/${sellerId}/stateful-access`, hub.apiKey, { accountWriteVariant: 'later' });
      // The email only where the plan asks for it (each policy: buyer-email.test.ts).
      await api.patch(`/v1/plans/${plan.id}`, hub.apiKey, { verifiedEmailPolicy: 'requested' });
      // An agent a human claimed (the claim itself is walked in agent-claims.test.ts).
      const claimed = await hub.agent({ buyer: true });
      const { account } = await buy(undefined, claimed.token);
      t.match(await drain(account.accessId, 1), { status: 'applied' });
      const email = `${claimed.buyerId!.toLowerCase()}@example.com`;
      t.match(await receiver.store.get(account.accessId), { buyerId: claimed.buyerId, buyerEmail: email });
      t.equal(receiver.requests.at(-1)?.buyerEmail, email);
      await api.put(`/v1/sellers/${sellerId}/stateful-access`, hub.apiKey, { accountWriteVariant: 'original' });
      await api.patch(`/v1/plans/${plan.id}`, hub.apiKey, { verifiedEmailPolicy: 'off' });
    });

    await t.test("a sandbox seller's write and key mint carry hub-sandbox: 1 and ,sb=1", async (t) => {
      const { account } = await buy();
      // Set in place: the flag is fixed at creation, and these calls read it from the seller's row.
      await db.seller.update({ where: { id: sellerId }, data: { sandbox: true } });
      t.teardown(() => db.seller.update({ where: { id: sellerId }, data: { sandbox: false } }));
      t.match(await drain(account.accessId, 1), { status: 'applied' });
      const write = receiver.requests.filter((r) => r.requestId === `${account.accessId}:1`).at(-1);
      t.equal(write?.sandbox, '1', 'hub-sandbox: 1');
      t.match(write?.signature, /,sb=1$/, 'the signature ends ,sb=1, and the SDK took it');

      await setStatefulFlags(db, sellerId, { servicing: true });
      const minted = await redeemKey(db, hub.cp.masterKey, { sellerId, agentId: agent.agentId, accessId: account.accessId });
      t.ok(minted, 'a key was minted');
      t.equal(receiver.requests.at(-1)?.sandbox, '1');
      t.equal(receiver.mints.at(-1)?.sandbox, true, "the SDK's identity says sandbox");
      await setStatefulFlags(db, sellerId, { servicing: false });
    });

    await t.test('a 401 is tried once more with the newest secret, rotated meanwhile', async (t) => {
      const { account } = await buy();
      receiver.beforeNext = async () => {
        // The seller rotates while hub's request is on its way, and keeps only the new secret.
        const rotated = await api.post(`/v1/sellers/${sellerId}/signing-secrets/rotate`, hub.apiKey);
        handed.set(rotated.body.signingSecret.id, rotated.body.secret);
        onlyHanded = true;
      };
      t.match(await drain(account.accessId, 1), { status: 'applied', attempts: 1 });
      t.equal(
        receiver.requests.filter((r) => r.requestId === `${account.accessId}:1`).length,
        2,
        'refused with the old secret, applied with the new',
      );
    });

    await t.test('a repeated delivery is harmless: the seller applies a version once', async (t) => {
      const { account } = await buy();
      await drain(account.accessId, 1);
      const balance = (await receiver.store.get(account.accessId))!.balanceMicros;
      // As after a lease lapsed on a worker that had delivered: the row is due again.
      await db.accountWrite.update({
        where: { accessId_kind_stateVersion: { accessId: account.accessId, kind: 'write', stateVersion: 1 } },
        data: { status: 'pending', nextAttemptAt: new Date() },
      });
      t.match(await drain(account.accessId, 1), { status: 'applied' });
      t.equal((await receiver.store.get(account.accessId))!.balanceMicros, balance, 'no credit twice');
    });

    await t.test('an endpoint whose name now resolves where hub does not connect is not called', async (t) => {
      // Stored while the name resolved nowhere (checked again at connect, as here); then the
      // name answers with the cloud metadata address, as a rebinding name would.
      const endpoint = new URL(receiver.url);
      endpoint.hostname = 'rebind.test';
      await becomeStateful(endpoint.href);
      const resolvingTo = (address: string) =>
        new UpstreamAddresses({}, async (host) => (host === 'rebind.test' ? [{ address, family: 4 }] : resolveWithSystem(host)));
      const { account } = await buy();
      const seen = receiver.requests.length;
      const guarded = new AccountWriteWorker(db, hub.cp.masterKey, { live: rail }, pino({ level: 'silent' }), {
        schedule: FAST,
        pollMs: 60_000,
        addresses: resolvingTo('169.254.169.254'),
      });
      await guarded.runOnce();
      const refused = await writeOf(account.accessId, 1);
      t.match(refused, { status: 'pending', attempts: 1, lastError: /rebind\.test resolves to 169\.254\.169\.254; .*link-local/ });
      t.equal(receiver.requests.length, seen, 'nothing reached any address');

      const allowed = new AccountWriteWorker(db, hub.cp.masterKey, { live: rail }, pino({ level: 'silent' }), {
        schedule: FAST,
        pollMs: 60_000,
        addresses: resolvingTo('127.0.0.1'),
      });
      await untilDue(refused);
      await allowed.runOnce();
      t.match(
        await writeOf(account.accessId, 1),
        { status: 'applied', attempts: 2 },
        'once it resolves where hub connects, it is delivered',
      );
      await becomeStateful(receiver.url);
    });
  });
}
