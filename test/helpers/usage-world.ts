import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { changeCatalog } from '../../control-plane/catalog/guards.js';
import type { Provider } from '../../control-plane/db/client.js';
import { createHotRoutes } from '../../control-plane/rest/hot-routes.js';
import { closeServer, listen } from '../../runtime/http-server.js';
import { sendError } from '../../runtime/respond.js';
import { newId } from '../../shared/ids.js';
import { startTestControlPlane, type TestControlPlane } from './control-plane.js';
import { testProviders } from './database.js';
import { managementClient, type Reply } from './management.js';

type Tap = { teardown: (fn: () => unknown) => void };

/** How the usage routes are reached: through the REST API's procedures, or the direct binding (http.ts). */
export type Binding = 'rest' | 'direct';

/** Every database under test, each through both bindings. */
export function bindingsAndProviders(): [Provider, Binding][] {
  return testProviders().flatMap((provider) => (['rest', 'direct'] as const).map((binding): [Provider, Binding] => [provider, binding]));
}

/**
 * A seller's world for usage tests, written straight to the database (purchases come later):
 * one seller with a service `forecast` and meters `requests` (priced everywhere) and `tokens`
 * (priced per 1,000 on the credit plans only), `unpriced` and `pings` (free, on the units plan
 * only); a pay-as-you-go plan, a credit plan, a subscription plan and a credit plan with credit
 * units; and builders for buyers, agents, accesses, requests and payments.
 */
export async function usageWorld(t: Tap, provider: Provider, binding: Binding = 'rest') {
  const cp = await startTestControlPlane(t, provider);
  const api = managementClient(binding === 'direct' ? await withDirectBinding(t, cp) : cp.url);
  const boot = await cp.bootstrap();
  const db = cp.db;
  const organizationId = boot.organizationId;

  const sellerId = newId('seller');
  await db.seller.create({
    data: {
      id: sellerId,
      organizationId,
      name: 'Acme',
      slug: `acme-${randomBytes(3).toString('hex')}`,
      upstreamBaseUrl: 'http://127.0.0.1:9',
    },
  });
  const serviceId = newId('service');
  await db.service.create({ data: { id: serviceId, organizationId, sellerId, name: 'Forecast', slug: 'forecast' } });
  const meter = async (key: string) =>
    (await db.meter.create({ data: { id: newId('meter'), organizationId, serviceId, key, unit: key } })).id;
  const meters = {
    requests: await meter('requests'),
    tokens: await meter('tokens'),
    unpriced: await meter('unpriced'),
    pings: await meter('pings'),
  };

  const plan = async (slug: string, billingMode: string, interval = 'none', creditUnits?: { units: number; label: string }) =>
    (
      await db.plan.create({
        data: {
          id: newId('plan'),
          organizationId,
          serviceId,
          name: slug,
          slug,
          billingMode,
          interval,
          verifiedEmailPolicy: 'off',
          includedCreditUnits: creditUnits?.units ?? 0,
          includedCreditUnitLabel: creditUnits?.label ?? null,
        },
      })
    ).id;
  const price = (
    planId: string,
    meterId: string,
    terms: { priceMicros: bigint; unitSize?: number; includedUnits?: number; defaultMaxQuantity?: number | null },
  ) =>
    // As the catalog's own writes do (catalog/guards.ts › changeCatalog): a price is read from the
    // seller's cached catalog until the seller is marked changed.
    changeCatalog(db, sellerId, (tx) =>
      tx.planMeterPrice.create({
        data: {
          id: newId('planMeterPrice'),
          organizationId,
          planId,
          meterId,
          priceMicros: terms.priceMicros,
          unitSize: terms.unitSize ?? 1,
          includedUnits: terms.includedUnits ?? 0,
          defaultMaxQuantity: terms.defaultMaxQuantity ?? null,
        },
      }),
    );
  const plans = {
    payg: await plan('per-call', 'payg', 'month'),
    credit: await plan('credits', 'credit'),
    subscription: await plan('monthly', 'subscription', 'month'),
    units: await plan('units', 'credit', 'month', { units: 20, label: 'credits' }),
  };
  // Pay as you go: $0.01 a request, 5 free requests a month in free mode.
  await price(plans.payg, meters.requests, { priceMicros: 10_000n, includedUnits: 5 });
  // Credit: $0.001 a request after 10 included, $0.002 per started 1,000 tokens; checks default to 50 tokens.
  await price(plans.credit, meters.requests, { priceMicros: 1_000n, includedUnits: 10 });
  await price(plans.credit, meters.tokens, { priceMicros: 2_000n, unitSize: 1_000, defaultMaxQuantity: 50 });
  // Subscription without credit: 3 included requests a period, nothing beyond.
  await price(plans.subscription, meters.requests, { priceMicros: 1_000n, includedUnits: 3 });
  // Credit with 20 credit units a period: 2 included requests, then units, then $0.001 a request and
  // $0.002 per started 1,000 tokens; `pings` cost nothing.
  await price(plans.units, meters.requests, { priceMicros: 1_000n, includedUnits: 2 });
  await price(plans.units, meters.tokens, { priceMicros: 2_000n, unitSize: 1_000 });
  await price(plans.units, meters.pings, { priceMicros: 0n });

  const buyer = async (options: { verified?: boolean } = {}) =>
    (
      await db.buyer.create({
        data: {
          id: newId('buyer'),
          email: `${newId('buyer').toLowerCase()}@example.com`,
          emailVerifiedAt: options.verified === false ? null : new Date(),
        },
      })
    ).id;
  const agent = async (options: { buyerId?: string | null; claimed?: boolean } = {}) =>
    (
      await db.agent.create({
        data: {
          id: newId('agent'),
          walletAddress: `0x${randomBytes(20).toString('hex')}`,
          buyerId: options.buyerId ?? null,
          claimedAt: options.claimed === false || !options.buyerId ? null : new Date(),
        },
      })
    ).id;

  const hour = 3_600_000;
  const access = async (options: {
    agentId: string;
    buyerId?: string | null;
    planId?: string;
    status?: string;
    balanceMicros?: bigint;
    credit?: boolean;
    periodStart?: Date | null;
    periodEnd?: Date | null;
  }) =>
    (
      await db.access.create({
        data: {
          id: newId('access'),
          sellerId,
          planId: options.planId ?? plans.credit,
          agentId: options.agentId,
          buyerId: options.buyerId ?? null,
          status: options.status ?? 'active',
          periodStart: options.periodStart === undefined ? new Date(Date.now() - hour) : options.periodStart,
          periodEnd: options.periodEnd === undefined ? new Date(Date.now() + 24 * hour) : options.periodEnd,
          creditGrantedMicros: options.credit === false ? null : (options.balanceMicros ?? 1_000_000n),
          balanceMicros: options.credit === false ? 0n : (options.balanceMicros ?? 1_000_000n),
        },
      })
    ).id;

  /** A request as the proxy records it before forwarding an identified agent's call. */
  const request = async (options: { agentId?: string | null; buyerId?: string | null; mode?: 'paid' | 'free'; sellerId?: string } = {}) => {
    const id = newId('request');
    await db.requestRecord.create({
      data: {
        id,
        sellerId: options.sellerId ?? sellerId,
        agentId: options.agentId ?? null,
        buyerId: options.buyerId ?? null,
        method: 'GET',
        path: '/forecast',
        lifecycle: 'forwarded',
        mode: options.mode ?? 'paid',
      },
    });
    return id;
  };

  /** A per-call payment for `requestId`, as the payments flow leaves it while the paid retry is forwarded. */
  const payment = async (requestId: string, usage: { meterSlug: string; quantity: number }[], status = 'in_flight') =>
    (
      await db.paymentAttempt.create({
        data: {
          id: newId('paymentAttempt'),
          organizationId,
          sellerId,
          serviceId,
          planId: plans.payg,
          requestId,
          kind: 'call',
          method: 'GET',
          pathAndQuery: '/forecast',
          bodyDigest: '0'.repeat(64),
          usageJson: JSON.stringify(usage),
          amountMicros: 10_000n * BigInt(usage.reduce((sum, item) => sum + item.quantity, 0)),
          status,
        },
      })
    ).id;

  const key = boot.apiKey;
  /** With the all-scopes key, or `token` (null: no Authorization header). */
  const check = (body: unknown, token: string | null = key): Promise<Reply> =>
    api.call('POST', '/v1/usage/check', { token: token ?? undefined, body });
  const report = (body: unknown, token: string | null = key): Promise<Reply> =>
    api.call('POST', '/v1/usage', { token: token ?? undefined, body });
  const balance = async (accessId: string) => (await db.access.findUniqueOrThrow({ where: { id: accessId } })).balanceMicros;
  const events = (requestId: string) => db.usageEvent.findMany({ where: { requestId }, include: { items: true } });

  return {
    cp,
    api,
    db,
    boot,
    organizationId,
    sellerId,
    serviceId,
    meters,
    plans,
    price,
    plan,
    buyer,
    agent,
    access,
    request,
    payment,
    check,
    report,
    balance,
    events,
    hour,
  };
}

export type UsageWorld = Awaited<ReturnType<typeof usageWorld>>;

/** A server in front of the control-plane that serves the usage routes directly, as a mounted binding would. */
async function withDirectBinding(t: Tap, cp: TestControlPlane): Promise<string> {
  const usage = createHotRoutes(cp);
  const front = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    if (usage.serves(req.method, path)) usage.handle(req, res, path).catch((err) => sendError(res, err));
    else cp.server.emit('request', req, res);
  });
  const port = await listen(front, 0, '127.0.0.1');
  t.teardown(() => closeServer(front, 1_000));
  return `http://127.0.0.1:${port}`;
}

export type { TestControlPlane };
