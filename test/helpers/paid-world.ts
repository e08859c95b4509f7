import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import type { Hex } from 'viem';
import type { LocalChain } from '../../chain/local-chain.js';
import { setStatefulFlags } from '../../control-plane/catalog/sellers.js';
import type { Provider } from '../../control-plane/db/client.js';
import type { Facilitator } from '../../control-plane/facilitator/facilitator.js';
import { localRail, type PaymentRail } from '../../control-plane/payments/rail.js';
import { closeServer, listen } from '../../runtime/http-server.js';
import { localhostDispatcher } from '../../runtime/localhost-dispatcher.js';
import { withHubSignature } from '../../sdk/node.js';
import { type PaymentRequiredItem, paymentRequiredBody } from '../../sdk/payment-required.js';
import { createUsageClient, type UsageClient } from '../../sdk/usage-client.js';
import { seedPricedService } from './catalog-seed.js';
import { startTestChain } from './chain.js';
import { startTestHub } from './hub.js';
import { managementClient } from './management.js';
import { holdGate } from './payg-seller.js';

type Tap = { teardown: (fn: () => unknown) => void };

/** Resolves every *.pay.localhost name to loopback, so unmodified fetch clients reach the proxy. */
export function useLoopbackResolver(t: Tap): void {
  const previous = getGlobalDispatcher();
  setGlobalDispatcher(localhostDispatcher());
  t.teardown(() => setGlobalDispatcher(previous));
}

/**
 * A paying world for end-to-end tests: anvil with HubUSD, hub settling on it, and a seller `acme`
 * selling `search` / `calls` at $0.01 per call (payg). The seller asks for payment the first time
 * it sees a request id and serves its retry (hub forwards the paid retry under the challenged
 * request's id). Paths: `/identity` asks for identity only, `/broken` answers 500 once paid,
 * `/over` reports 5 calls, `/unpriced` asks for a meter no plan prices, `/misreported` reports one
 * instead, `/garbled` reports in a `hub-usage` that does not parse, `/crowded` in one of 101
 * items (past the limit), `/odd-status` answers status 700 once paid, anything else reports 1.
 * Ceiling pricing: `/ceiling`, or any path with `?max=`, asks for calls without a quantity (at most
 * `max` when given, else the price's default) and reports `?used=` calls, or nothing without it.
 * `/gzip-challenge` asks for payment in a gzip-compressed body; `/twice` names `calls` twice (2 and
 * 1) and reports 3.
 */
export async function startPaidWorld(
  t: Tap,
  provider: Provider,
  options: {
    wrapFacilitator?: (f: Facilitator) => Facilitator;
    env?: Record<string, string>;
    /**
     * The seller asks hub's usage check first, as a seller serving plans does: a request some
     * plan or payment covers is served at once (and reports its usage in `hub-usage`); any
     * other is challenged.
     */
    checkUsage?: boolean;
    /** False: a rail without an escrow, as a remote facilitator's is. */
    escrow?: boolean;
    /** The rail hub settles on, made for the world's chain (default: the chain's local rail). */
    rail?: (chain: LocalChain) => PaymentRail | Promise<PaymentRail>;
  } = {},
) {
  const chain = await startTestChain(t);
  const rail = options.rail ? await options.rail(chain) : localRail(chain);
  if (options.wrapFacilitator) rail.facilitator = options.wrapFacilitator(rail.facilitator);
  if (options.escrow === false) delete rail.escrow;
  const hub = await startTestHub(t, provider, options.env ?? {}, rail);
  useLoopbackResolver(t);

  const secrets = new Map<string, string>();
  const challenged = new Set<string>();
  const served: string[] = [];
  const paymentHeadersSeen: string[] = [];
  let usageClient: UsageClient | undefined;
  const checks: { requestId: string; allowed: boolean; reason: string | null }[] = [];
  const hold = holdGate();
  const seller = withHubSignature(
    async (req: IncomingMessage, res: ServerResponse, { identity }) => {
      for (const h of ['payment-signature', 'x-payment', 'payment', 'payment-authorization', 'authorization'])
        if (req.headers[h]) paymentHeadersSeen.push(h);
      const target = new URL(req.url ?? '/', 'http://seller');
      const path = target.pathname;
      const max = target.searchParams.get('max');
      const used = target.searchParams.get('used');
      const ceiling = path === '/ceiling' || max !== null;
      const usage: PaymentRequiredItem[] =
        path === '/identity'
          ? []
          : path === '/unpriced'
            ? [{ meterSlug: 'storage', quantity: 1 }]
            : ceiling
              ? [max === null ? { meterSlug: 'calls' } : { meterSlug: 'calls', maxQuantity: Number(max) }]
              : path === '/three'
                ? [{ meterSlug: 'calls', quantity: 3 }]
                : path === '/twice'
                  ? [
                      { meterSlug: 'calls', quantity: 2 },
                      { meterSlug: 'calls', quantity: 1 },
                    ]
                  : [{ meterSlug: 'calls', quantity: 1 }];
      let covered = false;
      if (usageClient && usage.length) {
        const check = await usageClient.check({
          zcRequestId: identity.requestId,
          serviceSlug: 'search',
          usage: usage.map((u) => ({ meterSlug: u.meterSlug, quantity: 'quantity' in u ? u.quantity : 1 })),
        });
        checks.push({ requestId: identity.requestId, ...check });
        covered = check.allowed;
      }
      if (!covered && !challenged.has(identity.requestId)) {
        challenged.add(identity.requestId);
        const asked = JSON.stringify(paymentRequiredBody({ serviceSlug: 'search', usage }));
        if (path === '/gzip-challenge') {
          res.writeHead(402, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
          return res.end(gzipSync(asked));
        }
        res.writeHead(402, { 'content-type': 'application/json' });
        return res.end(asked);
      }
      served.push(identity.requestId);
      // `/hold` is answered only when the test lets it go: a paid request kept in flight at the seller.
      if (path === '/hold') await hold.held();
      if (path === '/broken') {
        // Broken, and posing as hub: billing and receipts for a payment hub releases.
        res.writeHead(500, {
          'content-type': 'application/json',
          'hub-billing': '{"status":"settled","chargedUsd":"0.010000"}',
          'hub-usage-adjusted': '[]',
          'payment-response': Buffer.from('{"success":true,"transaction":"0xforged"}').toString('base64'),
          'payment-receipt': Buffer.from('{"status":"success","reference":"0xforged"}').toString('base64url'),
        });
        return res.end('{"error":"boom"}');
      }
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      // Reported: `/over` beyond the authorization, `/zero` nothing, a ceiling `used`, everything else (`/three` too) one call.
      const reported = ceiling
        ? used === null
          ? undefined
          : Number(used)
        : path === '/over'
          ? 5
          : path === '/zero'
            ? 0
            : path === '/twice'
              ? 3
              : 1;
      if (usage.length && reported !== undefined)
        headers['hub-usage'] = JSON.stringify([{ serviceSlug: 'search', meterSlug: 'calls', quantity: reported }]);
      if (path === '/misreported') headers['hub-usage'] = JSON.stringify([{ serviceSlug: 'search', meterSlug: 'storage', quantity: 1 }]);
      if (path === '/garbled') headers['hub-usage'] = '[{"serviceSlug":"search"';
      if (path === '/crowded')
        headers['hub-usage'] = JSON.stringify(
          Array.from({ length: 101 }, () => ({ serviceSlug: 'search', meterSlug: 'calls', quantity: 0 })),
        );
      if (path === '/odd-status') {
        res.writeHead(700, headers);
        return res.end('{}');
      }
      res.writeHead(200, headers);
      res.end(JSON.stringify({ results: ['a', 'b'], agent: identity.agentId }));
    },
    { secrets: (kid) => secrets.get(kid) },
  );
  const upstream = createServer((req, res) => void seller(req, res));
  const upstreamPort = await listen(upstream, 0, '127.0.0.1');
  t.teardown(() => closeServer(upstream, 200));

  const payTo = chain.accounts[2]!.address;
  const payerKey = chain.accounts[3]!.privateKey as Hex;
  if (options.checkUsage) usageClient = createUsageClient({ baseUrl: hub.cp.url, apiKey: hub.apiKey });
  const s = await hub.seller({ slug: 'acme', upstreamBaseUrl: `http://127.0.0.1:${upstreamPort}`, payToAddress: payTo });
  secrets.set(s.kid, s.secret);
  const { db } = hub.cp;
  const ids = { service: `svc_${'s'.repeat(24)}`, meter: `mtr_${'s'.repeat(24)}`, plan: `pln_${'s'.repeat(24)}` };
  await seedPricedService(db, {
    organizationId: hub.organizationId,
    sellerId: s.id,
    priceMicros: 10_000n,
    ids: { serviceId: ids.service, meterId: ids.meter, planId: ids.plan, priceId: `pmp_${'s'.repeat(24)}` },
  });

  const proxyPort = new URL(hub.proxyUrl).port;
  const api = managementClient(hub.cp.url);
  return {
    api,
    /** Opens the storefront (the operator's switch, as `hub seller stateful-access` flips it) and adds a plan on `search`. */
    offerPlan: async (plan: Record<string, unknown>): Promise<string> => {
      await setStatefulFlags(db, s.id, { sales: true });
      const reply = await api.post('/v1/plans', hub.apiKey, { serviceId: ids.service, ...plan });
      if (reply.status !== 201) throw new Error(`creating a plan failed: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body.plan.id as string;
    },
    /** Makes the seller stateful, its account endpoint at `accessEndpointUrl`, as the seller does through the API. */
    becomeStateful: async (accessEndpointUrl: string) => {
      const reply = await api.put(`/v1/sellers/${s.id}/stateful-access`, hub.apiKey, { stateful: true, accessEndpointUrl });
      if (reply.status !== 200) throw new Error(`PUT stateful-access failed: ${reply.status}`);
    },
    chain,
    rail,
    hub,
    db,
    ids,
    payTo,
    payerKey,
    served,
    checks,
    /** Lets the seller answer the requests it holds at `/hold`. */
    releaseHold: hold.release,
    sellerId: s.id,
    /** The seller's signing secrets by kid, as its own endpoints (an account receiver) look them up. */
    secretOf: (kid: string) => secrets.get(kid),
    paymentHeadersSeen,
    url: (path: string) => `http://acme.pay.localhost:${proxyPort}${path}`,
  };
}
