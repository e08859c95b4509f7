import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  type Account,
  type AccountStore,
  accountsFor,
  createAccountEndpoint,
  createUsageClient,
  formatUsd,
  identityRequiredBody,
  isServiceable,
  MemoryAccountStore,
  PAYMENT_REQUIRED_STATUS,
  type PageViewReporter,
  type SigningSecrets,
  sendError,
  sendJson,
  sha256Hex,
  type UsageClient,
  type UsageClientOptions,
  type VerifiedRequest,
  type WriteReply,
  withHubSignature,
} from '../../sdk/index.js';
import { sendDocsPage } from './docs-page.js';
import { KeyRing } from './keys.js';
import { type Meter, metered } from './metered.js';
import { streamEvents } from './stream.js';

/**
 * A small seller API built only on hub's SDK: what the proxy and delivery tests run against and
 * what the demo points at. Every route but the account endpoint sits behind signature
 * verification; the account endpoint verifies with its own purpose lines.
 *
 *   GET  /metered            usage check → 402 body, or serve + `hub-usage`
 *   POST /metered/report     the same, settled with POST /v1/usage instead of the header
 *   GET  /identity           402 with `usage: []` until the agent is identified
 *   GET  /stream             server-sent events with pauses (?events=&delayMs=)
 *   ANY  /echo[/…]           the verified identity and the headers and body received
 *   GET  /accounts           the accounts this identity may use
 *   POST /zeroclick/access[/{accessId}/keys]   account writes and key mints
 *   GET  /keyed              the seller's own API, called directly with a key hub relayed
 *                            (Authorization: Bearer sk_demo_…), served while the account is
 *                            serviceable
 *   GET  /docs               the seller's public documentation page (HTML, unsigned)
 *
 * With `pageViews`, the pages it serves (the docs page; none of the API's JSON) are reported to hub.
 */
export type SellerAppOptions = {
  secrets: SigningSecrets;
  /** hub's usage API, with its outage policy (`allowanceOutage`, failClosed unless set). */
  hub: UsageClientOptions;
  /** A usage client made elsewhere (to close it at shutdown); by default one is made from `hub`. */
  usage?: UsageClient;
  pageViews?: PageViewReporter;
  serviceSlug: string;
  /** The usage each metered call asks for; default one `calls`. */
  meters?: readonly Meter[];
  /** Named in the 402 body when set. */
  planSlug?: string;
  store?: AccountStore;
  /** How long a new account stays `provisioning` before it reports `active` (default 0). */
  provisionAfterMs?: number;
  onError?: (err: unknown) => void;
};

export function createSellerApp(options: SellerAppOptions): Server {
  const store = options.store ?? new MemoryAccountStore();
  const usage = options.usage ?? createUsageClient(options.hub);
  const meters = options.meters ?? [{ meterSlug: 'calls', quantity: 1 }];
  const metering = { usage, serviceSlug: options.serviceSlug, meters, planSlug: options.planSlug };
  const keys = new KeyRing();
  const readyAt = new Map<string, number>();

  function lifecycle(account: Account): WriteReply {
    const at = readyAt.get(account.accessId) ?? Date.now() + (options.provisionAfterMs ?? 0);
    readyAt.set(account.accessId, at);
    const waitMs = at - Date.now();
    return waitMs > 0 ? { lifecycle: 'provisioning', retryAfterSeconds: Math.ceil(waitMs / 1000) } : { lifecycle: 'active' };
  }

  const accountEndpoint = createAccountEndpoint({
    secrets: options.secrets,
    store,
    lifecycle,
    mintKey: (account) => keys.mint(account),
    onError: options.onError,
  });

  const api = withHubSignature(
    async (req: IncomingMessage, res: ServerResponse, verified: VerifiedRequest) => {
      const url = new URL(req.url ?? '/', 'http://seller.invalid');
      const { identity } = verified;
      const route = `${req.method} ${url.pathname}`;
      switch (route) {
        case 'GET /metered':
          return metered(res, url.searchParams, identity, metering, 'header');
        case 'POST /metered':
          return metered(res, url.searchParams, identity, metering, 'header', verified.body);
        case 'POST /metered/report':
          return metered(res, url.searchParams, identity, metering, 'report');
        case 'GET /identity':
          if (identity.agentId === undefined) return sendJson(res, PAYMENT_REQUIRED_STATUS, identityRequiredBody(options.serviceSlug));
          return sendJson(res, 200, { agentId: identity.agentId, buyerId: identity.buyerId ?? null });
        case 'GET /stream':
          return streamEvents(res, url.searchParams, identity);
        case 'GET /accounts': {
          const accounts = await accountsFor(store, identity);
          return sendJson(res, 200, {
            accounts: accounts.map((a) => ({
              accessId: a.accessId,
              plan: a.plan.slug,
              status: a.status,
              serviceable: isServiceable(a),
              balanceUsd: formatUsd(a.balanceMicros),
              stateVersion: a.stateVersion,
            })),
          });
        }
      }
      if (url.pathname === '/echo' || url.pathname.startsWith('/echo/')) {
        return sendJson(res, 200, {
          identity,
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: verified.body.toString('utf8'),
          bodySha256: sha256Hex(verified.body),
        });
      }
      sendJson(res, 404, { error: 'not_found' });
    },
    { secrets: options.secrets },
  );

  /** A buyer calling the seller directly with a minted key: no hub in between, so no signature. */
  async function keyed(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const key = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const accessId = key ? keys.accountOf(key) : undefined;
    const account = accessId ? await store.get(accessId) : undefined;
    if (!account) return sendJson(res, 401, { error: 'invalid_api_key' });
    if (!isServiceable(account)) return sendJson(res, 403, { error: 'account_not_serviceable' });
    sendJson(res, 200, { served: true, accessId: account.accessId, plan: account.plan.slug });
  }

  return createServer(async (req, res) => {
    try {
      options.pageViews?.track(req, res);
      if (await accountEndpoint.handle(req, res)) return;
      const path = req.url?.split('?', 1)[0];
      if (req.method === 'GET' && path === '/keyed') return await keyed(req, res);
      if (req.method === 'GET' && path === '/docs') return sendDocsPage(res);
      await api(req, res);
    } catch (err) {
      options.onError?.(err);
      sendError(res, err);
    }
  });
}
