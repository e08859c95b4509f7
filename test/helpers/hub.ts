import type { Server } from 'node:http';
import { Readable } from 'node:stream';
import pino from 'pino';
import { type Dispatcher, getGlobalDispatcher } from 'undici';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { touchSeller } from '../../control-plane/catalog/guards.js';
import type { Provider } from '../../control-plane/db/client.js';
import { createProxy } from '../../proxy/create.js';
import { listen } from '../../runtime/http-server.js';
import { newId } from '../../shared/ids.js';
import { sealSecret } from '../../shared/secret-box.js';
import { hashToken, newToken } from '../../shared/tokens.js';
import { startTestControlPlane, type TestControlPlane, type TestRails } from './control-plane.js';

type Tap = { teardown: (fn: () => unknown) => void };

export type TestHub = {
  cp: TestControlPlane;
  proxy: ReturnType<typeof createProxy>;
  proxyUrl: string;
  organizationId: string;
  /** An all-scopes API key of that organization (the seller's key for the usage routes). */
  apiKey: string;
  /** Creates a seller whose upstream is `upstreamBaseUrl`, with one active signing secret. */
  seller: (input: {
    slug: string;
    upstreamBaseUrl: string;
    sandbox?: boolean;
    payToAddress?: string;
  }) => Promise<{ id: string; kid: string; secret: string }>;
  /** Adds a newer active secret and retires the others, without telling the proxy (a stale cache). */
  rotateSecretQuietly: (sellerId: string) => Promise<{ kid: string; secret: string }>;
  /**
   * An agent with a bearer token; `buyer: true` gives it an owner with a verified email. Written
   * into the database for speed: test/proxy/agents/agent-claims.test.ts makes the same through the product.
   */
  agent: (options?: { buyer?: boolean }) => Promise<{ agentId: string; buyerId: string | null; token: string }>;
  /** Sends a request to the pay URL of `slug`. */
  pay: (slug: string, path: string, init?: RequestInit & { headers?: Record<string, string> }) => Promise<Response>;
};

/** A control-plane and a proxy on loopback ports, over a fresh database of `provider`. */
export async function startTestHub(t: Tap, provider: Provider, env: Record<string, string> = {}, rails?: TestRails): Promise<TestHub> {
  const cp = await startTestControlPlane(t, provider, env, rails);
  const boot = await cp.bootstrap();
  const config = {
    ...cp.config,
    controlPlane: { ...cp.config.controlPlane, url: cp.url },
  };
  const proxy = createProxy(config, pino({ level: process.env.HUB_TEST_LOG_LEVEL ?? 'silent' }), cp.internalToken);
  const port = await listen(proxy.server, 0, '127.0.0.1');
  t.teardown(() => proxy.stop());
  const proxyUrl = `http://127.0.0.1:${port}`;
  const db = cp.db;

  const addSecret = async (sellerId: string) => {
    const secret = newToken('signingSecret');
    const kid = newId('signingSecret');
    await db.signingSecret.create({ data: { id: kid, sellerId, encryptedSecret: sealSecret(cp.masterKey, secret), status: 'active' } });
    return { kid, secret };
  };

  return {
    cp,
    proxy,
    proxyUrl,
    organizationId: boot.organizationId,
    apiKey: boot.apiKey,
    seller: async ({ slug, upstreamBaseUrl, sandbox, payToAddress }) => {
      const id = newId('seller');
      await db.seller.create({
        data: {
          id,
          organizationId: boot.organizationId,
          name: slug,
          slug,
          upstreamBaseUrl,
          sandbox: sandbox ?? false,
          payToAddress: payToAddress ?? null,
        },
      });
      return { id, ...(await addSecret(id)) };
    },
    rotateSecretQuietly: async (sellerId) => {
      await new Promise((r) => setTimeout(r, 5));
      await db.signingSecret.updateMany({ where: { sellerId, status: 'active' }, data: { status: 'retired', retiredAt: new Date() } });
      return addSecret(sellerId);
    },
    agent: async (options = {}) => {
      const token = newToken('agent');
      const buyerId = options.buyer ? newId('buyer') : null;
      if (buyerId)
        await db.buyer.create({ data: { id: buyerId, email: `${buyerId.toLowerCase()}@example.com`, emailVerifiedAt: new Date() } });
      const agentId = newId('agent');
      await db.agent.create({
        data: {
          id: agentId,
          walletAddress: privateKeyToAccount(generatePrivateKey()).address.toLowerCase(),
          tokenHash: hashToken(token),
          buyerId,
          claimedAt: buyerId ? new Date() : null,
        },
      });
      return { agentId, buyerId, token };
    },
    pay: (slug, path, init = {}) => payRequest(proxyUrl, path, `${slug}.${config.payDomain}`, init),
  };
}

/** fetch() cannot set Host; undici's request can. The answer is wrapped as a web Response. */
export async function payRequest(
  origin: string,
  path: string,
  host: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<Response> {
  // `path` is sent exactly as written (a URL object would normalize dot segments away).
  const res = await getGlobalDispatcher().request({
    origin,
    path,
    method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
    headers: { host, ...(init.headers as Record<string, string> | undefined) },
    body: (init.body as string | Buffer | undefined) ?? null,
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) headers.append(name, v);
  }
  const noBody = res.statusCode === 204 || res.statusCode === 304 || init.method === 'HEAD';
  if (noBody) await res.body.dump();
  return new Response(noBody ? null : (Readable.toWeb(res.body) as ReadableStream), { status: res.statusCode, headers });
}

export type { Server };
export { touchSeller };
