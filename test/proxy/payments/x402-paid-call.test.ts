import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t from 'tap';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { eip3009Abi } from '../../../control-plane/facilitator/transfer-authorization.js';
import { issuePaymentChallenge } from '../../../control-plane/payments/challenge.js';
import { releaseStrandedCalls } from '../../../control-plane/payments/settlement/pending.js';
import { settleAndRecord } from '../../../control-plane/payments/settlement/record.js';
import { planStanding } from '../../../control-plane/storefront/plan-standing.js';
import { newRequestId } from '../../../shared/ids.js';
import { usdToMicros } from '../../../shared/money.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { registerAgent } from '../../helpers/agents.js';
import { chainReader, chainWallet, tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { admitPaidRetry, signPayment } from '../../helpers/sign-payment.js';

const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
const fromB64 = (value: string | null) => JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));
const billingOf = (res: Response) => JSON.parse(res.headers.get('hub-billing') ?? '{}');
/** The hub-billing of a call charged nothing: nothing is submitted and the authorization lapses. */
const lapsed = (authorizedUsd: string) => ({
  status: 'settled',
  authorizedUsd,
  chargedUsd: '0.000000',
  remainderUsd: authorizedUsd,
  remainderHandling: 'escrow_expired',
  settleTransactionHash: null,
});

for (const provider of testProviders()) {
  t.test(`x402 pay per call on ${provider}`, async (t) => {
    const { api, chain, db, hub, rail, payTo, payerKey, served, paymentHeadersSeen, releaseHold, sellerId, url } = await startPaidWorld(
      t,
      provider,
    );
    const payer = privateKeyToAccount(payerKey);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: payer });
    client.setSpendControls({ allowedAssets: true });
    const payingFetch = wrapFetchWithPayment(fetch, client);

    /** An unpaid call: the agent-facing 402 and the requirements it carries. */
    const challenge = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(url(path), init);
      const body = (await res.json()) as Record<string, unknown> & { accepts: PaymentRequirements[] };
      return { res, body, requirements: body.accepts[0]! };
    };
    const paidRetry = (path: string, payment: unknown, init: RequestInit = {}) =>
      fetch(url(path), { ...init, headers: { ...(init.headers as Record<string, string>), 'payment-signature': b64json(payment) } });

    await t.test('the challenge: priced body, x402 header, nothing of the seller’s 402', async (t) => {
      const { res, body } = await challenge('/search?q=1');
      t.equal(res.status, 402);
      t.match(body, {
        error: 'payment_required',
        reason: 'absent',
        zcRequestId: /^hubreq_/,
        serviceSlug: 'search',
        usage: [{ meterSlug: 'calls', quantity: 1 }],
        plan: { id: `pln_${'s'.repeat(24)}`, slug: 'per-call', billingMode: 'payg' },
        payment: { id: /^apay_/, amountUsd: '0.010000' },
        protocols: {
          x402: { x402Version: 2, network: chain.network, scheme: 'exact', amount: '10000', asset: chain.token.address },
          mpp: { challengeId: /^[A-Za-z0-9_-]+$/, method: 'evm', intent: 'charge' },
        },
        x402Version: 2,
        resource: { url: url('/search?q=1') },
        accepts: [
          {
            scheme: 'exact',
            network: chain.network,
            amount: '10000',
            payTo,
            extra: { name: chain.token.name, version: chain.token.version },
          },
        ],
      });
      t.notOk('rail' in (body.payment as object), 'rail and network are omitted on anonymous challenges');
      const header = fromB64(res.headers.get('payment-required'));
      t.match(header, { x402Version: 2, accepts: body.accepts });
      t.match(
        res.headers.get('www-authenticate'),
        /^Payment id="[^"]+", realm="acme\.pay\.localhost", method="evm", intent="charge", request="/,
      );
    });

    await t.test('usage no plan prices is a 409, as is a ceiling with no maximum; a rail without an escrow takes no ceiling', async (t) => {
      const servedBefore = served.length;
      const unpriced = await fetch(url('/unpriced'));
      t.equal(unpriced.status, 409);
      t.match(await unpriced.json(), { error: 'usage_not_priced', reason: /does not price the meter "storage"/ });
      const unbounded = await fetch(url('/ceiling'));
      t.equal(unbounded.status, 409, 'no quantity, no maxQuantity and no defaultMaxQuantity on the price');
      t.match(await unbounded.json(), { error: 'usage_not_priced', reason: /neither quantity nor maxQuantity/ });
      // A rail without an escrow (a remote facilitator's) can neither reserve nor pay actual.
      const escrow = rail.escrow;
      delete rail.escrow;
      try {
        const ceiling = await fetch(url('/ceiling?max=3'));
        t.equal(ceiling.status, 503);
        t.same(await ceiling.json(), { error: 'capped_pricing_unavailable' });
      } finally {
        rail.escrow = escrow;
      }
      t.equal(served.length, servedBefore, 'nothing was served');
    });

    await t.test('a ceiling price is paid into the escrow; the seller gets what was used and the rest returns at once', async (t) => {
      const escrow = chain.escrow!;
      const { body } = await challenge('/ceiling?max=5&used=2');
      t.match(body, {
        usage: [{ meterSlug: 'calls', quantity: 5 }],
        payment: { amountUsd: '0.050000' },
        accepts: [{ scheme: 'exact', amount: '50000', payTo: escrow }],
      });

      const before = { payer: await tokenBalance(chain, payer.address), payTo: await tokenBalance(chain, payTo) };
      const res = await payingFetch(url('/ceiling?max=5&used=2'));
      t.equal(res.status, 200);
      const billing = billingOf(res);
      t.match(billing, {
        status: 'settled',
        authorizedUsd: '0.050000',
        chargedUsd: '0.020000',
        remainderUsd: '0.030000',
        remainderHandling: 'escrow_returned',
        settleTransactionHash: /^0x[0-9a-f]{64}$/,
      });
      t.match(fromB64(res.headers.get('payment-response')), { success: true, transaction: billing.settleTransactionHash, amount: '20000' });
      t.equal(await tokenBalance(chain, payer.address), before.payer - 20_000n, 'the payer paid what was used');
      t.equal(await tokenBalance(chain, payTo), before.payTo + 20_000n, 'the seller was paid what was used');
      t.equal(await tokenBalance(chain, escrow), 0n, 'the escrow keeps nothing');
      const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/ceiling?max=5&used=2', status: 'settled' } });
      t.match(attempt, {
        amountMicros: 50_000n,
        chargedMicros: 20_000n,
        remainderHandling: 'escrow_returned',
        payTo: escrow,
        payoutTo: payTo,
        settleTxHash: billing.settleTransactionHash,
      });
      t.equal(await db.creditEntry.count({ where: { paymentAttemptId: attempt.id } }), 0, 'returned on chain, not credited');

      // Settling again (a second control-plane) finds the first payout and pays nothing more.
      const again = await settleAndRecord(db, rail, attempt);
      t.match(again, { status: 'settled', transaction: billing.settleTransactionHash });
      t.equal(await tokenBalance(chain, payTo), before.payTo + 20_000n);
    });

    await t.test('a ceiling with nothing reported is charged the ceiling; one reported at zero lapses', async (t) => {
      const res = await payingFetch(url('/ceiling?max=2'));
      t.match(billingOf(res), { chargedUsd: '0.020000', remainderUsd: '0.000000', remainderHandling: 'escrow_returned' });

      const before = await tokenBalance(chain, payer.address);
      const zero = await payingFetch(url('/ceiling?max=4&used=0'));
      t.equal(zero.status, 200);
      t.same(billingOf(zero), lapsed('0.040000'));
      t.equal(zero.headers.get('payment-response'), null);
      t.equal(await tokenBalance(chain, payer.address), before, 'the authorization lapses unsettled');
    });

    await t.test('without maxQuantity the price’s defaultMaxQuantity is the ceiling', async (t) => {
      const patched = await api.patch(`/v1/plan-meter-prices/pmp_${'s'.repeat(24)}`, hub.apiKey, { defaultMaxQuantity: 3 });
      t.equal(patched.status, 200);
      t.teardown(() => api.patch(`/v1/plan-meter-prices/pmp_${'s'.repeat(24)}`, hub.apiKey, { defaultMaxQuantity: null }));
      const res = await payingFetch(url('/ceiling?used=1'));
      t.equal(res.status, 200);
      t.match(billingOf(res), { authorizedUsd: '0.030000', chargedUsd: '0.010000', remainderHandling: 'escrow_returned' });
    });

    await t.test('an escrowed authorization someone submits to the token directly is still paid out once', async (t) => {
      const escrow = chain.escrow!;
      const path = '/hold?max=4&used=1';
      const { requirements } = await challenge(path);
      const payment = (await client.createPaymentPayload({
        x402Version: 2,
        resource: { url: url(path) },
        accepts: [requirements],
      } as never)) as unknown as {
        payload: {
          authorization: { from: Hex; to: Hex; value: string; validAfter: string; validBefore: string; nonce: Hex };
          signature: Hex;
        };
      };
      const before = { payer: await tokenBalance(chain, payer.address), payTo: await tokenBalance(chain, payTo) };
      const pending = paidRetry(path, payment);
      while (!(await db.paymentAttempt.findFirst({ where: { pathAndQuery: path, status: 'in_flight' } })))
        await new Promise((r) => setTimeout(r, 20));

      // While the seller works, a third party submits the signed authorization to the token itself.
      const { authorization: a, signature } = payment.payload;
      const front = chainWallet(chain, chain.accounts[4]!.privateKey as Hex);
      const hash = await front.writeContract({
        address: chain.token.address,
        abi: eip3009Abi,
        functionName: 'transferWithAuthorization',
        args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, signature] as never,
      });
      await chainReader(chain).waitForTransactionReceipt({ hash });
      t.equal(await tokenBalance(chain, escrow), 40_000n, 'the whole authorization sits in the escrow');

      releaseHold();
      const res = await pending;
      t.equal(res.status, 200);
      t.match(billingOf(res), { status: 'settled', chargedUsd: '0.010000', remainderHandling: 'escrow_returned' });
      t.equal(await tokenBalance(chain, escrow), 0n, 'paid out');
      t.equal(await tokenBalance(chain, payTo), before.payTo + 10_000n);
      t.equal(await tokenBalance(chain, payer.address), before.payer - 10_000n);
    });

    await t.test('the unmodified x402 client pays; the seller’s response arrives with billing headers; tokens move', async (t) => {
      const before = { payer: await tokenBalance(chain, payer.address), payTo: await tokenBalance(chain, payTo) };
      const res = await payingFetch(url('/search?q=paid'));
      t.equal(res.status, 200);
      t.match(await res.json(), { results: ['a', 'b'], agent: /^agt_/ });
      const billing = billingOf(res);
      t.match(billing, {
        status: 'settled',
        authorizedUsd: '0.010000',
        chargedUsd: '0.010000',
        remainderUsd: '0.000000',
        settleTransactionHash: /^0x[0-9a-f]{64}$/,
      });
      t.match(fromB64(res.headers.get('payment-response')), {
        success: true,
        transaction: billing.settleTransactionHash,
        network: chain.network,
        payer: payer.address.toLowerCase(),
      });
      t.equal(res.headers.get('hub-usage'), null);
      t.equal(await tokenBalance(chain, payer.address), before.payer - 10_000n, 'the payer paid 0.01');
      t.equal(await tokenBalance(chain, payTo), before.payTo + 10_000n, 'the seller was paid 0.01');
      t.same(paymentHeadersSeen, [], 'payment proofs never reach the seller');
    });

    await t.test('replay, mismatch and concurrency: exactly one forward and one settlement per payment', async (t) => {
      const { requirements } = await challenge('/search?q=race', { method: 'POST', body: '{"a":1}' });
      const payment = await client.createPaymentPayload({
        x402Version: 2,
        resource: { url: url('/search?q=race') },
        accepts: [requirements],
      } as never);
      const mismatch = await paidRetry('/search?q=race', payment, { method: 'POST', body: '{"a":2}' });
      t.equal(mismatch.status, 409);
      t.same(await mismatch.json(), { error: 'payment_request_mismatch' });
      const wrongPath = await paidRetry('/search?q=other', payment, { method: 'POST', body: '{"a":1}' });
      t.same(await wrongPath.json(), { error: 'payment_request_mismatch' });

      const before = await tokenBalance(chain, payTo);
      const servedBefore = served.length;
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          paidRetry('/search?q=race', payment, { method: 'POST', body: '{"a":1}' }).then(async (r) => ({
            status: r.status,
            body: (await r.json()) as { error?: string },
          })),
        ),
      );
      const ok = answers.filter((a) => a.status === 200);
      t.equal(ok.length, 1, 'exactly one retry is forwarded');
      for (const a of answers.filter((a) => a.status !== 200)) {
        t.equal(a.status, 409);
        t.ok(['payment_request_in_flight', 'payment_request_already_completed'].includes(a.body.error ?? ''), String(a.body.error));
      }
      t.equal(served.length - servedBefore, 1, 'the seller served it once');
      t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'settled once');
      const late = await paidRetry('/search?q=race', payment, { method: 'POST', body: '{"a":1}' });
      t.same(await late.json(), { error: 'payment_request_already_completed' });
    });

    await t.test('a retry while the paid request is at the seller is 409 payment_request_in_flight', async (t) => {
      const { requirements } = await challenge('/hold');
      const payment = await client.createPaymentPayload({
        x402Version: 2,
        resource: { url: url('/hold') },
        accepts: [requirements],
      } as never);
      const servedBefore = served.length;
      const first = paidRetry('/hold', payment);
      // Deterministic: the second retry goes out only once the seller holds the first.
      for (let i = 0; i < 500 && served.length === servedBefore; i++) await new Promise((r) => setTimeout(r, 10));
      t.equal(served.length, servedBefore + 1, 'the first retry reached the seller');
      const second = await paidRetry('/hold', payment);
      t.equal(second.status, 409);
      t.same(await second.json(), { error: 'payment_request_in_flight' });
      releaseHold();
      t.equal((await first).status, 200);
      const third = await paidRetry('/hold', payment);
      t.same(await third.json(), { error: 'payment_request_already_completed' });
      t.equal(served.length, servedBefore + 1, 'forwarded once');
    });

    await t.test('an identified agent’s challenge names it, the rail and the network', async (t) => {
      const agent = await registerAgent(hub, 'acme');
      const { res, body } = await challenge('/search?q=identified', { headers: { authorization: `Bearer ${agent.token}` } });
      t.equal(res.status, 402);
      t.match(body, {
        error: 'payment_required',
        zcAgentId: agent.agentId,
        zcRequestId: /^hubreq_/,
        payment: { id: /^apay_/, amountUsd: '0.010000', rail: String, network: chain.network },
      });
      const anonymous = await challenge('/search?q=anonymous');
      t.notOk('zcAgentId' in anonymous.body, 'an anonymous challenge names no agent');
      t.notOk('rail' in (anonymous.body.payment as object), 'nor the rail');
    });

    await t.test('a payment signed for another challenge cannot pay this one (replay store)', async (t) => {
      const first = await challenge('/search?q=r1');
      const payment = await client.createPaymentPayload({
        x402Version: 2,
        resource: { url: url('/search?q=r1') },
        accepts: [first.requirements],
      } as never);
      t.equal((await paidRetry('/search?q=r1', payment)).status, 200);
      const second = await challenge('/search?q=r1');
      const replay = { ...payment, accepted: second.requirements };
      const res = await paidRetry('/search?q=r1', replay);
      t.equal(res.status, 409);
      t.same(await res.json(), { error: 'payment_request_already_completed' });
    });

    await t.test('bad payments are refused with their reason and nothing is forwarded', async (t) => {
      const servedBefore = served.length;
      const cases: [string, (r: PaymentRequirements) => Promise<unknown>, string][] = [
        ['tampered amount', (r) => signPayment(chain, payerKey, r, { tamper: { value: '1' } }), 'amount_mismatch'],
        ['tampered nonce', (r) => signPayment(chain, payerKey, r, { tamper: { nonce: `0x${'11'.repeat(32)}` } }), 'invalid_signature'],
        ['underpaid', (r) => signPayment(chain, payerKey, r, { authorization: { value: 1n } }), 'amount_mismatch'],
        ['wrong payee', (r) => signPayment(chain, payerKey, r, { authorization: { to: payer.address } }), 'wrong_payee'],
        [
          'expired',
          (r) => signPayment(chain, payerKey, r, { authorization: { validBefore: BigInt(Math.floor(Date.now() / 1000) - 60) } }),
          'authorization_expired',
        ],
      ];
      for (const [name, make, reason] of cases) {
        const { requirements } = await challenge('/search?q=bad');
        const payment = (await make(requirements)) as Record<string, unknown>;
        const res = await paidRetry('/search?q=bad', { ...payment, accepted: requirements });
        t.equal(res.status, 402, name);
        t.match(await res.json(), { error: 'payment_required', reason: 'settlement_failed', settlementReason: new RegExp(reason) }, name);
      }
      t.equal(served.length, servedBefore, 'the seller never saw them');
    });

    await t.test('malformed payment headers are a clear 400, never a 500', async (t) => {
      const headers = [
        'not base64 !!',
        b64json({ x402Version: 2 }),
        b64json({ x402Version: 2, accepted: { scheme: 'exact' }, payload: {} }),
        Buffer.from('{').toString('base64'),
      ];
      for (const header of headers) {
        const res = await fetch(url('/search'), { headers: { 'payment-signature': header } });
        t.equal(res.status, 400, String(header).slice(0, 20));
        t.match(await res.json(), { error: 'invalid_request', reason: /Malformed payment header/ });
      }
      const accepted = {
        scheme: 'exact',
        network: chain.network,
        asset: chain.token.address,
        amount: '1',
        payTo,
        maxTimeoutSeconds: 60,
        extra: { paymentId: `apay_${'z'.repeat(24)}` },
      };
      const unknown = await fetch(url('/search'), { headers: { 'x-payment': b64json({ x402Version: 2, accepted, payload: {} }) } });
      t.equal(unknown.status, 402);
      t.match(await unknown.json(), { reason: 'settlement_failed', settlementReason: 'unknown_payment' });

      // Fields the schema leaves open are read as strings only: String() of an object whose
      // toString is no function throws.
      const hostile = await fetch(url('/search'), {
        headers: {
          'payment-signature': b64json({
            x402Version: 2,
            accepted,
            payload: { authorization: { nonce: { toString: 1 }, from: { valueOf: 1, toString: 1 } } },
          }),
        },
      });
      t.match([hostile.status, await hostile.json()], [402, { reason: 'settlement_failed', settlementReason: 'unknown_payment' }]);
      // Nested deeper than the JSON it is passed on as can go (about 4,100 levels on Node 20),
      // within the header's size limit; or holding a NUL, which PostgreSQL cannot store.
      const deep = JSON.stringify({ x402Version: 2, accepted, payload: {} }).replace(
        /}$/,
        `,"x":${'['.repeat(4_500)}${']'.repeat(4_500)}}`,
      );
      const withNul = b64json({ x402Version: 2, accepted, payload: { note: 'a\u0000b' } });
      for (const [header, why] of [
        [Buffer.from(deep).toString('base64'), /nests deeper than 32 levels/],
        [withNul, /NUL/],
      ] as const) {
        const res = await fetch(url('/search'), { headers: { 'payment-signature': header } });
        t.match([res.status, await res.json()], [400, { error: 'invalid_request', reason: why }]);
      }
    });

    await t.test('an upstream 500 after payment charges nothing', async (t) => {
      const before = await tokenBalance(chain, payer.address);
      const res = await payingFetch(url('/broken'));
      t.equal(res.status, 500, 'the seller’s own answer reaches the agent');
      t.same(await res.json(), { error: 'boom' });
      for (const name of ['hub-billing', 'hub-usage-adjusted', 'payment-response', 'payment-receipt']) {
        t.equal(res.headers.get(name), null, `the seller's own ${name} never reaches the agent`);
      }
      t.equal(await tokenBalance(chain, payer.address), before, 'no tokens moved');
      const attempt = await db.paymentAttempt.findFirst({ where: { pathAndQuery: '/broken' }, orderBy: { createdAt: 'desc' } });
      t.equal(attempt?.status, 'released');
    });

    await t.test('a 402 the seller compressed (the agent asked for gzip) is priced as any other', async (t) => {
      const { res, requirements } = await challenge('/gzip-challenge');
      t.equal(res.status, 402);
      t.equal(requirements.amount, '10000', '$0.01 for one call');
    });

    await t.test('a paid call admitted but never settled (its proxy stopped) is released after a while, nothing charged', async (t) => {
      const { requirements } = await challenge('/search?q=stranded-wallet');
      // Admitted as the proxy admits the paid retry before forwarding it; then the proxy stops.
      const paymentId = await admitPaidRetry(db, rail, chain, payerKey, requirements, {
        sellerId,
        method: 'GET',
        pathAndQuery: '/search?q=stranded-wallet',
        body: '',
      });
      const before = await tokenBalance(chain, payer.address);
      t.equal(await releaseStrandedCalls(db, 60_000), 0, 'not while it may still be answered');
      t.equal(await releaseStrandedCalls(db, -1), 1, 'released once it cannot be');
      t.equal(await releaseStrandedCalls(db, -1), 0, 'and only once');
      t.match(await db.paymentAttempt.findUnique({ where: { id: paymentId } }), { status: 'released', chargedMicros: 0n });
      t.equal(await tokenBalance(chain, payer.address), before, 'no tokens moved');
    });

    await t.test('a status HTTP does not define, once paid, is the seller’s failure: 502, nothing charged', async (t) => {
      const before = await tokenBalance(chain, payer.address);
      const res = await payingFetch(url('/odd-status'));
      t.match([res.status, await res.json()], [502, { error: 'upstream_error', reason: /status HTTP does not define/ }]);
      t.equal(await tokenBalance(chain, payer.address), before, 'no tokens moved');
      const attempt = await db.paymentAttempt.findFirst({ where: { pathAndQuery: '/odd-status' }, orderBy: { createdAt: 'desc' } });
      t.equal(attempt?.status, 'released');
      // A completion that named status 700 was refused by the control-plane, and its whole batch with it.
      await hub.proxy.services.recorder.drain();
      const record = await db.requestRecord.findFirst({ where: { path: '/odd-status' }, orderBy: { createdAt: 'desc' } });
      t.match(record, { lifecycle: 'failed', upstreamStatus: null });
    });

    await t.test('a meter the 402 names twice is authorized, and settled, for the sum', async (t) => {
      const res = await payingFetch(url('/twice'));
      t.equal(res.status, 200);
      t.match(billingOf(res), { status: 'settled', authorizedUsd: '0.030000', chargedUsd: '0.030000', remainderUsd: '0.000000' });
      t.equal(res.headers.get('hub-usage-adjusted'), null, 'the 3 calls reported are the 2 + 1 asked for');
    });

    await t.test('usage reported beyond the authorization settles at the cap and says so', async (t) => {
      const res = await payingFetch(url('/over'));
      t.equal(res.status, 200);
      t.same(JSON.parse(res.headers.get('hub-usage-adjusted') ?? 'null'), [
        { meterSlug: 'calls', reportedQuantity: 5, settledQuantity: 1 },
      ]);
      t.match(billingOf(res), { status: 'settled', chargedUsd: '0.010000' });
    });

    await t.test('usage hub cannot record is named in hub-usage-error and the challenged usage is charged', async (t) => {
      for (const [path, error] of [
        ['/misreported', 'meter_not_found'],
        ['/garbled', 'invalid_usage_header'],
        ['/crowded', 'invalid_usage_header'],
      ] as const) {
        const res = await payingFetch(url(path));
        t.equal(res.status, 200);
        t.equal(res.headers.get('hub-usage-error'), error, path);
        t.match(billingOf(res), { status: 'settled', chargedUsd: '0.010000' });
        t.ok(res.headers.get('payment-response'), 'settled on chain');
        const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: path } });
        t.equal(await db.usageEvent.count({ where: { requestId: attempt.requestId } }), 0, 'nothing recorded');
      }
    });

    await t.test('usage reported at zero settles nothing: the authorization lapses, no receipt', async (t) => {
      const before = await tokenBalance(chain, payer.address);
      const res = await payingFetch(url('/zero'));
      t.equal(res.status, 200);
      t.same(billingOf(res), lapsed('0.010000'));
      t.equal(res.headers.get('payment-response'), null, 'no receipt for a transaction that does not exist');
      t.equal(res.headers.get('hub-usage-adjusted'), null, 'settled as reported');
      t.equal(await tokenBalance(chain, payer.address), before, 'no tokens moved');
      const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/zero' } });
      t.match(attempt, { status: 'settled', chargedMicros: 0n, remainderHandling: 'escrow_expired', settleTxHash: null });
      t.equal(await db.creditEntry.count({ where: { paymentAttemptId: attempt.id } }), 0, 'nothing moved, nothing credited');
    });

    await t.test('charged less than authorized: exact moves it all, the remainder is the payer’s credit', async (t) => {
      const before = { payer: await tokenBalance(chain, payer.address), payTo: await tokenBalance(chain, payTo) };
      const agent = await registerAgent(hub, 'acme', payerKey);
      const receipt = async () => {
        const res = await hub.pay('acme', '/purchases/receipt', { headers: { authorization: `Bearer ${agent.token}` } });
        return (await res.json()) as { creditUsd: string };
      };
      t.equal((await receipt()).creditUsd, '0.000000', 'no credit before');
      const creditAnalytics = async () => {
        const reply = await api.get(`/v1/analytics/sellers/${sellerId}/credit?days=1`, hub.apiKey);
        t.equal(reply.status, 200);
        const { outstandingUsd, payers, creditedUsd, drawnUsd } = reply.body.credit;
        return {
          outstanding: usdToMicros(outstandingUsd),
          payers: payers as number,
          credited: usdToMicros(creditedUsd),
          drawn: usdToMicros(drawnUsd),
        };
      };
      const creditBefore = await creditAnalytics();

      const res = await payingFetch(url('/three'));
      t.equal(res.status, 200);
      const billing = billingOf(res);
      t.match(billing, {
        status: 'settled',
        authorizedUsd: '0.030000',
        chargedUsd: '0.010000',
        remainderUsd: '0.020000',
        remainderHandling: 'credited',
        settleTransactionHash: /^0x[0-9a-f]{64}$/,
      });
      t.equal(await tokenBalance(chain, payer.address), before.payer - 30_000n, 'the whole authorization moved');
      t.equal(await tokenBalance(chain, payTo), before.payTo + 30_000n);
      const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/three' } });
      t.match(attempt, { status: 'settled', amountMicros: 30_000n, chargedMicros: 10_000n, remainderHandling: 'credited' });
      const entries = await db.creditEntry.findMany({ where: { paymentAttemptId: attempt.id } });
      t.match(entries, [{ payer: payer.address.toLowerCase(), deltaMicros: 20_000n, reason: 'remainder' }], 'one ledger entry');
      t.equal((await receipt()).creditUsd, '0.020000', 'the credit shows on the receipt');
      t.same(
        await creditAnalytics(),
        {
          ...creditBefore,
          outstanding: creditBefore.outstanding + 20_000n,
          payers: creditBefore.payers + 1,
          credited: creditBefore.credited + 20_000n,
        },
        'and in the seller’s credit analytics',
      );

      // Settling again (a second control-plane finishing the same settlement) credits nothing more.
      await settleAndRecord(db, rail, attempt);
      t.equal(await db.creditEntry.count({ where: { paymentAttemptId: attempt.id } }), 1);
      t.equal((await receipt()).creditUsd, '0.020000');

      // The agent's later calls draw on the credit before a payment is asked.
      const asAgent = { headers: { authorization: `Bearer ${agent.token}` } };
      const balances = async () => ({ payer: await tokenBalance(chain, payer.address), payTo: await tokenBalance(chain, payTo) });
      const held = await balances();
      const servedBefore = served.length;
      const covered = await fetch(url('/search?q=credit'), asAgent);
      t.equal(covered.status, 200, 'served without a challenge');
      t.match(await covered.json(), { results: ['a', 'b'], agent: agent.agentId });
      t.same(billingOf(covered), {
        status: 'settled',
        authorizedUsd: '0.010000',
        chargedUsd: '0.010000',
        remainderUsd: '0.000000',
        remainderHandling: 'credited',
        settleTransactionHash: null,
        paidFrom: 'credit',
      });
      t.equal(covered.headers.get('payment-response'), null, 'no transaction, no receipt');
      t.equal(served.length, servedBefore + 1, 'the seller served it once');
      t.same(await balances(), held, 'no tokens moved');
      t.equal((await receipt()).creditUsd, '0.010000', 'the credit went down by the charge');
      t.match(
        await creditAnalytics(),
        { outstanding: creditBefore.outstanding + 10_000n, drawn: creditBefore.drawn + 10_000n },
        'the seller sees the draw',
      );
      const drawn = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=credit' } });
      t.match(drawn, {
        status: 'settled',
        protocol: 'credit',
        paymentMethod: 'credit',
        chargedMicros: 10_000n,
        payer: payer.address.toLowerCase(),
      });
      t.match(
        await db.creditEntry.findMany({ where: { paymentAttemptId: drawn.id }, orderBy: { reason: 'asc' } }),
        [{ reason: 'draw', deltaMicros: -10_000n }],
        'one draw, nothing to give back',
      );

      const tooDear = await fetch(url('/three'), asAgent);
      t.equal(tooDear.status, 402, 'a call the credit does not cover in full is challenged');
      t.equal((await receipt()).creditUsd, '0.010000', 'and draws nothing');

      const broken = await fetch(url('/broken'), asAgent);
      t.equal(broken.status, 500);
      t.equal(broken.headers.get('hub-billing'), null, 'nothing billed for the seller’s 500');
      t.equal((await receipt()).creditUsd, '0.010000', 'the draw came back');

      const zero = await fetch(url('/zero'), asAgent);
      t.equal(zero.status, 200);
      t.match(billingOf(zero), {
        chargedUsd: '0.000000',
        remainderUsd: '0.010000',
        remainderHandling: 'credited',
        paidFrom: 'credit',
      });
      t.equal((await receipt()).creditUsd, '0.010000', 'used nothing, so the credit is whole');
      const credit = await db.payerCredit.findUniqueOrThrow({
        where: { sellerId_payer: { sellerId: drawn.sellerId, payer: payer.address.toLowerCase() } },
      });
      const ledger = await db.creditEntry.findMany({ where: { sellerId: drawn.sellerId, payer: credit.payer } });
      t.equal(
        ledger.reduce((sum, e) => sum + e.deltaMicros, 0n),
        credit.balanceMicros,
        'the balance is the sum of its ledger',
      );
      t.same(await balances(), held, 'still no tokens moved');
      const analytics = await api.get(`/v1/analytics/sellers/${drawn.sellerId}?days=1`, hub.apiKey);
      t.equal(analytics.status, 200);
      t.match(
        analytics.body.analytics.recentTransactions.find((tx: { id: string }) => tx.id === drawn.id),
        {
          kind: 'call',
          status: 'settled',
          paymentMethod: 'credit',
          protocol: 'credit',
          amountUsd: '0.010000',
          agent: { id: agent.agentId },
        },
        'the seller sees the call its payer’s credit paid',
      );

      // A proxy that stops between the draw and the seller's answer leaves the call in flight: the
      // settlement loop gives its credit back, once.
      const stranded = await issuePaymentChallenge(
        db,
        { live: rail },
        {
          sellerId: drawn.sellerId,
          requestId: newRequestId(true),
          agentId: agent.agentId,
          buyerId: null,
          method: 'GET',
          pathAndQuery: '/search?q=stranded',
          bodyDigest: drawn.bodyDigest,
          serviceSlug: 'search',
          usage: [{ meterSlug: 'calls', quantity: 1 }],
          sandbox: false,
        },
        planStanding,
      );
      t.match(stranded, { kind: 'paid_from_credit', claimed: { agentId: agent.agentId, kind: 'call' } });
      t.equal((await receipt()).creditUsd, '0.000000', 'drawn');
      t.equal(await releaseStrandedCalls(db, 60_000), 0, 'not while it may still be answered');
      t.equal(await releaseStrandedCalls(db, -1), 1, 'released once it cannot be');
      t.equal(await releaseStrandedCalls(db, -1), 0, 'and only once');
      t.equal((await receipt()).creditUsd, '0.010000', 'the draw came back');

      // Credit was paid to the seller when it was credited: spending it needs no payout wallet.
      const wallet = async (payToAddress: string | null) =>
        t.equal((await api.patch(`/v1/sellers/${drawn.sellerId}`, hub.apiKey, { payToAddress })).status, 200);
      await wallet(null);
      const noWallet = await fetch(url('/search?q=no-wallet'), asAgent);
      t.equal(noWallet.status, 200, 'a call credit covers is served without a wallet');
      t.match(billingOf(noWallet), { status: 'settled', chargedUsd: '0.010000', paidFrom: 'credit' });
      t.equal((await receipt()).creditUsd, '0.000000', 'drawn from the credit');
      const unpaid = await fetch(url('/search?q=no-wallet-2'), asAgent);
      t.equal(unpaid.status, 503, 'one credit does not cover needs a wallet to be paid to');
      t.match(await unpaid.json(), { error: 'service_unavailable' });
      await wallet(payTo);
    });

    await t.test('an identity proof that does not verify is identity_invalid', async (t) => {
      const { requirements } = await challenge('/identity');
      const payment = (await client.createPaymentPayload({
        x402Version: 2,
        resource: { url: url('/identity') },
        accepts: [requirements],
      } as never)) as unknown as { payload: { signature: string } };
      const signature = payment.payload.signature;
      payment.payload.signature = `${signature.slice(0, 10)}${signature[10] === 'a' ? 'b' : 'a'}${signature.slice(11)}`;
      const res = await paidRetry('/identity', payment);
      t.equal(res.status, 402);
      t.match(await res.json(), { error: 'payment_required', reason: 'identity_invalid', settlementReason: String });
    });

    await t.test('an identity challenge is a zero-amount proof: no charge, no receipt', async (t) => {
      const { res, body } = await challenge('/identity');
      t.equal(res.status, 402);
      t.match(body, { usage: [], payment: { amountUsd: '0.000000' }, accepts: [{ amount: '0' }] });
      const before = await tokenBalance(chain, payer.address);
      const paid = await payingFetch(url('/identity'));
      t.equal(paid.status, 200);
      t.match(await paid.json(), { agent: /^agt_/ });
      t.equal(paid.headers.get('hub-billing'), null);
      t.equal(paid.headers.get('payment-response'), null, 'identity-only responses carry no receipt');
      t.equal(await tokenBalance(chain, payer.address), before);
    });
  });
}
