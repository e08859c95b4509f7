import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listen } from '../../runtime/http-server.js';
import type { HubIdentity } from '../../sdk/identity.js';
import { withHubSignature } from '../../sdk/node.js';
import { paymentRequiredBody } from '../../sdk/payment-required.js';
import type { ManagementClient } from './management.js';

type Tap = { teardown: (fn: () => unknown) => void };

/**
 * A gate requests wait at until the test releases them; armed again at each release, so every
 * request waits for the release after it arrived (a paid request kept in flight at the seller).
 */
export function holdGate() {
  const arm = () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    return { held, release };
  };
  let gate = arm();
  return {
    held: () => gate.held,
    release: () => {
      const released = gate;
      gate = arm();
      released.release();
    },
  };
}

/**
 * A pay-as-you-go seller's API on loopback, for tests of hub running as real processes: it asks
 * for payment (one call of `calls` on `serviceSlug`) the first time it sees a request id, and
 * serves the paid retry after `whilePaid` (a test's own doings in the middle of a paid call).
 * Its signing secrets are `secrets`, which `paygCatalog` fills.
 */
export async function startPaygSeller(
  t: Tap,
  serviceSlug: string,
  whilePaid: (req: IncomingMessage, identity: HubIdentity) => Promise<void> = async () => {},
) {
  const secrets = new Map<string, string>();
  const challenged = new Set<string>();
  const served: string[] = [];
  const seller = withHubSignature(
    async (req: IncomingMessage, res: ServerResponse, { identity }) => {
      if (!challenged.has(identity.requestId)) {
        challenged.add(identity.requestId);
        res.writeHead(402, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(paymentRequiredBody({ serviceSlug, usage: [{ meterSlug: 'calls', quantity: 1 }] })));
      }
      served.push(identity.requestId);
      await whilePaid(req, identity);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ results: ['a', 'b'], requestId: identity.requestId }));
    },
    { secrets: (kid) => secrets.get(kid) },
  );
  const upstream = createServer((req, res) => void seller(req, res));
  const port = await listen(upstream, 0, '127.0.0.1');
  t.teardown(() => closeServer(upstream, 200));
  return { url: `http://127.0.0.1:${port}`, secrets, served };
}

/**
 * The seller `slug`'s catalog made through the management API, as a seller makes it: the seller
 * (paid to `payToAddress` on `network`), a signing secret (added to `secrets`), the service
 * `serviceSlug` with a `calls` meter, and a pay-as-you-go plan at $0.01 a call.
 */
export async function paygCatalog(
  api: ManagementClient,
  apiKey: string,
  input: {
    slug: string;
    serviceSlug: string;
    upstreamBaseUrl: string;
    payToAddress: string;
    network: string;
    secrets: Map<string, string>;
  },
) {
  const created = async (path: string, body: unknown = {}) => {
    const reply = await api.post(path, apiKey, body);
    if (reply.status !== 201) throw new Error(`${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };
  const { seller } = await created('/v1/sellers', {
    name: input.slug,
    slug: input.slug,
    upstreamBaseUrl: input.upstreamBaseUrl,
    payToAddress: input.payToAddress,
    networks: [input.network],
  });
  const { signingSecret, secret } = await created(`/v1/sellers/${seller.id}/signing-secrets`);
  input.secrets.set(signingSecret.id, secret);
  const { service } = await created('/v1/services', { sellerId: seller.id, name: input.serviceSlug, slug: input.serviceSlug });
  const { meter } = await created('/v1/meters', { serviceId: service.id, key: 'calls', unit: 'call' });
  const { plan } = await created('/v1/plans', { serviceId: service.id, name: 'Per call', slug: 'payg', billingMode: 'payg' });
  const { planMeterPrice } = await created('/v1/plan-meter-prices', { planId: plan.id, meterId: meter.id, priceUsd: '0.01' });
  return { sellerId: seller.id as string, serviceId: service.id as string, planMeterPriceId: planMeterPrice.id as string };
}
