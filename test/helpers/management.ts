import { randomBytes } from 'node:crypto';
import { createApiKey, createSession } from '../../control-plane/auth/credentials.js';
import type { BootstrapResult } from '../../control-plane/bootstrap.js';
import type { Provider } from '../../control-plane/db/client.js';
import { newId } from '../../shared/ids.js';
import type { Scope } from '../../shared/scopes.js';
import { startTestControlPlane, type TestControlPlane } from './control-plane.js';

type Tap = { teardown: (fn: () => unknown) => void };

export type Reply = { status: number; body: any; headers: Headers };

export type CallOptions = {
  token?: string;
  body?: unknown;
  /** Sent as is, instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
};

/** A small HTTP client for the management API over real HTTP. */
export function managementClient(baseUrl: string) {
  const call = async (method: string, path: string, options: CallOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  return {
    call,
    get: (path: string, token?: string) => call('GET', path, { token }),
    post: (path: string, token: string | undefined, body?: unknown) => call('POST', path, { token, body }),
    patch: (path: string, token: string | undefined, body: unknown) => call('PATCH', path, { token, body }),
    put: (path: string, token: string | undefined, body: unknown) => call('PUT', path, { token, body }),
    delete: (path: string, token?: string) => call('DELETE', path, { token }),
  };
}

export type ManagementClient = ReturnType<typeof managementClient>;

/** One organization with a catalog of one of everything, made through the API itself. */
export type OrganizationFixture = BootstrapResult & {
  sellerId: string;
  signingSecretId: string;
  encryptionKeyId: string;
  serviceId: string;
  meterId: string;
  planId: string;
  planMeterPriceId: string;
  membershipId: string;
};

export async function organizationWithCatalog(cp: TestControlPlane, api: ManagementClient, label: string): Promise<OrganizationFixture> {
  const boot = await cp.bootstrap();
  const token = boot.apiKey;
  const expectCreated = (reply: Reply, what: string) => {
    if (reply.status !== 201) throw new Error(`creating ${what} failed: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };
  const slug = `${label}-${randomBytes(3).toString('hex')}`;
  const { seller } = expectCreated(
    await api.post('/v1/sellers', token, { name: `Seller ${label}`, slug, upstreamBaseUrl: 'http://127.0.0.1:9/api' }),
    'seller',
  );
  const { signingSecret } = expectCreated(await api.post(`/v1/sellers/${seller.id}/signing-secrets`, token), 'signing secret');
  const { encryptionKey } = expectCreated(await api.post(`/v1/sellers/${seller.id}/encryption-keys`, token), 'encryption key');
  const { service } = expectCreated(
    await api.post('/v1/services', token, { sellerId: seller.id, name: 'Forecast', slug: 'forecast' }),
    'service',
  );
  const { meter } = expectCreated(
    await api.post('/v1/meters', token, { serviceId: service.id, key: 'requests', unit: 'request' }),
    'meter',
  );
  const { plan } = expectCreated(
    await api.post('/v1/plans', token, { serviceId: service.id, name: 'Per call', slug: 'per-call', billingMode: 'payg' }),
    'plan',
  );
  const { planMeterPrice } = expectCreated(
    await api.post('/v1/plan-meter-prices', token, { planId: plan.id, meterId: meter.id, priceUsd: '0.01' }),
    'plan meter price',
  );
  const membership = await cp.db.membership.findFirstOrThrow({ where: { organizationId: boot.organizationId, userId: boot.userId } });
  return {
    ...boot,
    sellerId: seller.id,
    signingSecretId: signingSecret.id,
    encryptionKeyId: encryptionKey.id,
    serviceId: service.id,
    meterId: meter.id,
    planId: plan.id,
    planMeterPriceId: planMeterPrice.id,
    membershipId: membership.id,
  };
}

/**
 * Two organizations (`a`, the caller's, and `b`, someone else's) with full catalogs, and every
 * kind of credential the route-group checks need, all for organization `a`.
 */
export async function managementWorld(t: Tap, provider: Provider) {
  const cp = await startTestControlPlane(t, provider);
  const api = managementClient(cp.url);
  const a = await organizationWithCatalog(cp, api, 'a');
  const b = await organizationWithCatalog(cp, api, 'b');

  const keyWith = async (scopes: Scope[]) =>
    (await createApiKey(cp.db, { organizationId: a.organizationId, name: scopes.join(' ') || 'none', scopes })).key;
  const revokedKey = await createApiKey(cp.db, {
    organizationId: a.organizationId,
    name: 'revoked',
    scopes: ['admin:read', 'admin:write'],
  });
  await cp.db.apiKey.update({ where: { id: revokedKey.apiKey.id }, data: { revokedAt: new Date() } });

  const expired = await createSession(cp.db, a.userId, a.organizationId);
  await cp.db.session.update({ where: { id: expired.session.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
  const signedOut = await createSession(cp.db, a.userId, a.organizationId);
  await cp.db.session.update({ where: { id: signedOut.session.id }, data: { revokedAt: new Date() } });

  const userNamed = async (role: 'admin' | 'member' | null) => {
    const user = await cp.db.user.create({ data: { id: newId('user'), email: `${newId('user').toLowerCase()}@example.com` } });
    if (role) await cp.db.membership.create({ data: { id: newId('membership'), organizationId: a.organizationId, userId: user.id, role } });
    return user;
  };
  const member = await userNamed('member');
  const formerMember = await userNamed(null);

  return {
    cp,
    api,
    a,
    b,
    credentials: {
      adminSession: a.sessionToken,
      allScopesKey: a.apiKey,
      readKey: await keyWith(['admin:read']),
      writeKey: await keyWith(['admin:write']),
      usageKey: await keyWith(['usage:read', 'usage:write', 'page-views:write', 'agentify:convert']),
      allAdminKey: await keyWith(['admin:read', 'admin:write']),
      revokedKey: revokedKey.key,
      expiredSession: expired.token,
      signedOutSession: signedOut.token,
      memberSession: (await createSession(cp.db, member.id, a.organizationId)).token,
      /** A session of a user with no organization selected. */
      noOrganizationSession: (await createSession(cp.db, a.userId, null)).token,
      /** A session whose current organization the user no longer belongs to. */
      formerMemberSession: (await createSession(cp.db, formerMember.id, a.organizationId)).token,
    },
  };
}

export type ManagementWorld = Awaited<ReturnType<typeof managementWorld>>;
