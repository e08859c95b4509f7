import t from 'tap';
import { testProviders } from '../../helpers/database.js';
import { managementWorld } from '../../helpers/management.js';
import { checkRouteGroups, type RouteCase } from '../../helpers/route-groups.js';

// Every REST route of the management API with its route group (spec: Authentication › Route
// groups and Scopes), and a probe that reaches past the credential checks without changing
// anything: organization b's ids answer 404 with the resource's own code (spec: Errors: "A
// resource that is missing, or owned by another organization, is 404 in both cases").
const notFound = (error: string) => ({ status: 404, error });
const invalidBody = { status: 400 };

const routes: RouteCase[] = [
  // Sellers, including signing secrets and stateful access
  { method: 'GET', route: '/v1/sellers', group: 'catalog-read', probe: () => ({ path: '/v1/sellers', expect: { status: 200 } }) },
  { method: 'POST', route: '/v1/sellers', group: 'catalog-write', probe: () => ({ path: '/v1/sellers', body: {}, expect: invalidBody }) },
  {
    method: 'GET',
    route: '/v1/sellers/{sellerId}',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/sellers/${b.sellerId}`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'PATCH',
    route: '/v1/sellers/{sellerId}',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/sellers/${b.sellerId}`, body: { name: 'x' }, expect: notFound('seller_not_found') }),
  },
  {
    method: 'DELETE',
    route: '/v1/sellers/{sellerId}',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/sellers/${b.sellerId}`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'GET',
    route: '/v1/sellers/{sellerId}/stateful-access',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/sellers/${b.sellerId}/stateful-access`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'PUT',
    route: '/v1/sellers/{sellerId}/stateful-access',
    group: 'catalog-write',
    probe: ({ b }) => ({
      path: `/v1/sellers/${b.sellerId}/stateful-access`,
      body: { accessEndpointUrl: 'https://x.example/access' },
      expect: notFound('seller_not_found'),
    }),
  },
  {
    method: 'GET',
    route: '/v1/sellers/{sellerId}/signing-secrets',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/sellers/${b.sellerId}/signing-secrets`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/sellers/{sellerId}/signing-secrets',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/sellers/${b.sellerId}/signing-secrets`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/sellers/{sellerId}/signing-secrets/rotate',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/sellers/${b.sellerId}/signing-secrets/rotate`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'GET',
    route: '/v1/sellers/{sellerId}/signing-secrets/{signingSecretId}',
    group: 'catalog-read',
    probe: ({ a, b }) => ({
      path: `/v1/sellers/${a.sellerId}/signing-secrets/${b.signingSecretId}`,
      expect: notFound('signing_secret_not_found'),
    }),
  },
  {
    method: 'POST',
    route: '/v1/sellers/{sellerId}/signing-secrets/{signingSecretId}/retire',
    group: 'catalog-write',
    probe: ({ b }) => ({
      path: `/v1/sellers/${b.sellerId}/signing-secrets/${b.signingSecretId}/retire`,
      expect: notFound('seller_not_found'),
    }),
  },
  {
    method: 'GET',
    route: '/v1/sellers/{sellerId}/encryption-keys',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/sellers/${b.sellerId}/encryption-keys`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/sellers/{sellerId}/encryption-keys',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/sellers/${b.sellerId}/encryption-keys`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'GET',
    route: '/v1/sellers/{sellerId}/encryption-keys/{encryptionKeyId}',
    group: 'catalog-read',
    probe: ({ a, b }) => ({
      path: `/v1/sellers/${a.sellerId}/encryption-keys/${b.encryptionKeyId}`,
      expect: notFound('encryption_key_not_found'),
    }),
  },
  {
    method: 'POST',
    route: '/v1/sellers/{sellerId}/encryption-keys/{encryptionKeyId}/retire',
    group: 'catalog-write',
    probe: ({ b }) => ({
      path: `/v1/sellers/${b.sellerId}/encryption-keys/${b.encryptionKeyId}/retire`,
      expect: notFound('seller_not_found'),
    }),
  },

  // Services
  {
    method: 'GET',
    route: '/v1/services',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/services?sellerId=${b.sellerId}`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/services',
    group: 'catalog-write',
    probe: ({ b }) => ({
      path: '/v1/services',
      body: { sellerId: b.sellerId, name: 'x', slug: 'x' },
      expect: notFound('seller_not_found'),
    }),
  },
  {
    method: 'GET',
    route: '/v1/services/{serviceId}',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/services/${b.serviceId}`, expect: notFound('service_not_found') }),
  },
  {
    method: 'PATCH',
    route: '/v1/services/{serviceId}',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/services/${b.serviceId}`, body: { name: 'x' }, expect: notFound('service_not_found') }),
  },
  {
    method: 'DELETE',
    route: '/v1/services/{serviceId}',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/services/${b.serviceId}`, expect: notFound('service_not_found') }),
  },

  // Accounts (a well-formed id no organization holds answers as another organization's would)
  {
    method: 'GET',
    route: '/v1/accounts',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/accounts?sellerId=${b.sellerId}`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'GET',
    route: '/v1/accounts/{accessId}',
    group: 'catalog-read',
    probe: () => ({ path: '/v1/accounts/hubacc_000000000000000000000000', expect: notFound('access_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/accounts/{accessId}/cancel',
    group: 'catalog-write',
    probe: () => ({ path: '/v1/accounts/hubacc_000000000000000000000000/cancel', expect: notFound('access_not_found') }),
  },
  {
    method: 'GET',
    route: '/v1/account-writes',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/account-writes?sellerId=${b.sellerId}`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/account-writes/{accountWriteId}/resend',
    group: 'catalog-write',
    probe: () => ({ path: '/v1/account-writes/awr_000000000000000000000000/resend', expect: notFound('account_write_not_found') }),
  },

  // Declared routes, and what agents discover
  {
    method: 'GET',
    route: '/v1/services/{serviceId}/routes',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/services/${b.serviceId}/routes`, expect: notFound('service_not_found') }),
  },
  {
    method: 'PUT',
    route: '/v1/services/{serviceId}/routes',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/services/${b.serviceId}/routes`, body: { routes: [] }, expect: notFound('service_not_found') }),
  },
  {
    method: 'GET',
    route: '/v1/sellers/{sellerId}/discovery',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/sellers/${b.sellerId}/discovery`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/sellers/{sellerId}/try',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/sellers/${b.sellerId}/try`, body: {}, expect: notFound('seller_not_found') }),
  },

  // Meters
  {
    method: 'GET',
    route: '/v1/meters',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/meters?serviceId=${b.serviceId}`, expect: notFound('service_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/meters',
    group: 'catalog-write',
    probe: ({ b }) => ({
      path: '/v1/meters',
      body: { serviceId: b.serviceId, key: 'x', unit: 'call' },
      expect: notFound('service_not_found'),
    }),
  },
  {
    method: 'GET',
    route: '/v1/meters/{meterId}',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/meters/${b.meterId}`, expect: notFound('meter_not_found') }),
  },
  {
    method: 'PATCH',
    route: '/v1/meters/{meterId}',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/meters/${b.meterId}`, body: { unit: 'x' }, expect: notFound('meter_not_found') }),
  },
  {
    method: 'DELETE',
    route: '/v1/meters/{meterId}',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/meters/${b.meterId}`, expect: notFound('meter_not_found') }),
  },

  // Plans
  {
    method: 'GET',
    route: '/v1/plans',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/plans?serviceId=${b.serviceId}`, expect: notFound('service_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/plans',
    group: 'catalog-write',
    probe: ({ b }) => ({
      path: '/v1/plans',
      body: { serviceId: b.serviceId, name: 'x', slug: 'x', billingMode: 'payg' },
      expect: notFound('service_not_found'),
    }),
  },
  {
    method: 'GET',
    route: '/v1/plans/{planId}',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/plans/${b.planId}`, expect: notFound('plan_not_found') }),
  },
  {
    method: 'PATCH',
    route: '/v1/plans/{planId}',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/plans/${b.planId}`, body: { name: 'x' }, expect: notFound('plan_not_found') }),
  },
  {
    method: 'DELETE',
    route: '/v1/plans/{planId}',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/plans/${b.planId}`, expect: notFound('plan_not_found') }),
  },

  // Plan meter prices
  {
    method: 'GET',
    route: '/v1/plan-meter-prices',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/plan-meter-prices?planId=${b.planId}`, expect: notFound('plan_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/plan-meter-prices',
    group: 'catalog-write',
    probe: ({ b }) => ({
      path: '/v1/plan-meter-prices',
      body: { planId: b.planId, meterId: b.meterId, priceUsd: '0.01' },
      expect: notFound('plan_not_found'),
    }),
  },
  {
    method: 'GET',
    route: '/v1/plan-meter-prices/{planMeterPriceId}',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/plan-meter-prices/${b.planMeterPriceId}`, expect: notFound('plan_meter_price_not_found') }),
  },
  {
    method: 'PATCH',
    route: '/v1/plan-meter-prices/{planMeterPriceId}',
    group: 'catalog-write',
    probe: ({ b }) => ({
      path: `/v1/plan-meter-prices/${b.planMeterPriceId}`,
      body: { unitSize: 2 },
      expect: notFound('plan_meter_price_not_found'),
    }),
  },
  {
    method: 'DELETE',
    route: '/v1/plan-meter-prices/{planMeterPriceId}',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: `/v1/plan-meter-prices/${b.planMeterPriceId}`, expect: notFound('plan_meter_price_not_found') }),
  },

  // Card payments: hub's organization plan checkout (admins) and the seller's onboarding link
  {
    method: 'POST',
    route: '/v1/organizations/current/plan/checkout',
    group: 'admin',
    probe: () => ({ path: '/v1/organizations/current/plan/checkout', body: {}, expect: invalidBody }),
  },
  {
    method: 'POST',
    route: '/v1/organizations/current/plan/checkout/{sessionId}/confirm',
    group: 'admin',
    probe: () => ({ path: `/v1/organizations/current/plan/checkout/${'x'.repeat(256)}/confirm`, expect: invalidBody }),
  },
  {
    method: 'POST',
    route: '/v1/stripe-connect/account-link',
    group: 'catalog-write',
    probe: () => ({ path: '/v1/stripe-connect/account-link', body: {}, expect: invalidBody }),
  },

  // Dashboard sessions, users, organizations
  {
    method: 'POST',
    route: '/v1/auth/sign-in',
    group: 'anonymous',
    probe: () => ({
      path: '/v1/auth/sign-in',
      body: { email: 'nobody@example.com', password: 'wrong password' },
      expect: { status: 401, error: 'invalid_credentials' },
    }),
  },
  {
    method: 'POST',
    route: '/v1/auth/sign-out',
    group: 'session',
    probe: () => ({ path: '/v1/auth/sign-out', body: { unexpected: true }, expect: invalidBody }),
  },
  { method: 'GET', route: '/v1/users/me', group: 'session', probe: () => ({ path: '/v1/users/me', expect: { status: 200 } }) },
  { method: 'GET', route: '/v1/organizations', group: 'session', probe: () => ({ path: '/v1/organizations', expect: { status: 200 } }) },
  {
    method: 'PUT',
    route: '/v1/organizations/current',
    group: 'session',
    probe: ({ b }) => ({
      path: '/v1/organizations/current',
      body: { organizationId: b.organizationId },
      expect: notFound('organization_not_found'),
    }),
  },
  {
    method: 'GET',
    route: '/v1/organizations/current',
    group: 'member',
    probe: () => ({ path: '/v1/organizations/current', expect: { status: 200 } }),
  },
  {
    method: 'GET',
    route: '/v1/organizations/current/members',
    group: 'member',
    probe: () => ({ path: '/v1/organizations/current/members', expect: { status: 200 } }),
  },
  {
    method: 'POST',
    route: '/v1/organizations/current/members',
    group: 'admin',
    probe: () => ({ path: '/v1/organizations/current/members', body: {}, expect: invalidBody }),
  },
  {
    method: 'PATCH',
    route: '/v1/organizations/current/members/{membershipId}',
    group: 'admin',
    probe: ({ b }) => ({
      path: `/v1/organizations/current/members/${b.membershipId}`,
      body: { role: 'member' },
      expect: notFound('membership_not_found'),
    }),
  },
  {
    method: 'DELETE',
    route: '/v1/organizations/current/members/{membershipId}',
    group: 'admin',
    probe: ({ b }) => ({ path: `/v1/organizations/current/members/${b.membershipId}`, expect: notFound('membership_not_found') }),
  },

  {
    method: 'GET',
    route: '/v1/organizations/current/invitations',
    group: 'member',
    probe: () => ({ path: '/v1/organizations/current/invitations', expect: { status: 200 } }),
  },
  {
    method: 'DELETE',
    route: '/v1/organizations/current/invitations/{invitationId}',
    group: 'admin',
    probe: () => ({ path: `/v1/organizations/current/invitations/inv_${'0'.repeat(24)}`, expect: notFound('invitation_not_found') }),
  },
  {
    method: 'GET',
    route: '/v1/invitations/{token}',
    group: 'anonymous',
    probe: () => ({ path: `/v1/invitations/hubinv_${'0'.repeat(40)}`, expect: notFound('invitation_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/invitations/{token}/accept',
    group: 'anonymous',
    probe: () => ({
      path: `/v1/invitations/hubinv_${'0'.repeat(40)}/accept`,
      body: { password: 'correct horse' },
      expect: notFound('invitation_not_found'),
    }),
  },

  // Analytics
  {
    method: 'GET',
    route: '/v1/analytics/sellers/{sellerId}',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/analytics/sellers/${b.sellerId}?days=7&timeZone=UTC`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'GET',
    route: '/v1/analytics/sellers/{sellerId}/credit',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/analytics/sellers/${b.sellerId}/credit`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'GET',
    route: '/v1/analytics/sellers/{sellerId}/page-views',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/analytics/sellers/${b.sellerId}/page-views`, expect: notFound('seller_not_found') }),
  },

  // Sandbox (spec: Scopes, sandbox endpoints: admin:read reads, admin:write the rest)
  {
    method: 'POST',
    route: '/v1/sandbox/agents',
    group: 'catalog-write',
    probe: ({ b }) => ({ path: '/v1/sandbox/agents', body: { sellerId: b.sellerId }, expect: notFound('seller_not_found') }),
  },
  {
    method: 'GET',
    route: '/v1/sandbox/agents',
    group: 'catalog-read',
    probe: ({ b }) => ({ path: `/v1/sandbox/agents?sellerId=${b.sellerId}`, expect: notFound('seller_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/calls',
    group: 'catalog-write',
    probe: () => ({
      path: '/v1/sandbox/calls',
      body: { agentId: `agt_${'0'.repeat(24)}`, path: '/' },
      expect: notFound('test_agent_not_found'),
    }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/purchases',
    group: 'catalog-write',
    probe: () => ({ path: '/v1/sandbox/purchases', body: { agentId: `agt_${'0'.repeat(24)}` }, expect: notFound('test_agent_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/accounts/{accessId}/clock',
    group: 'catalog-write',
    probe: () => ({
      path: `/v1/sandbox/accounts/hubacc_${'0'.repeat(24)}/clock`,
      body: { advanceSeconds: 60 },
      expect: notFound('access_not_found'),
    }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/payments/{paymentId}/refund',
    group: 'catalog-write',
    probe: () => ({ path: `/v1/sandbox/payments/apay_${'0'.repeat(24)}/refund`, expect: notFound('payment_not_found') }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/payments/{paymentId}/dispute',
    group: 'catalog-write',
    probe: () => ({
      path: `/v1/sandbox/payments/apay_${'0'.repeat(24)}/dispute`,
      body: { status: 'open' },
      expect: notFound('payment_not_found'),
    }),
  },

  // API keys: dashboard sessions only, so API keys cannot make API keys
  { method: 'POST', route: '/v1/usage/check', group: 'api-key', probe: () => ({ path: '/v1/usage/check', body: {}, expect: invalidBody }) },
  { method: 'POST', route: '/v1/usage', group: 'api-key', probe: () => ({ path: '/v1/usage', body: {}, expect: invalidBody }) },
  {
    method: 'POST',
    route: '/v1/page-views',
    group: 'api-key',
    probe: ({ b }) => ({ path: '/v1/page-views', body: { seller: b.sellerId, path: '/' }, expect: notFound('seller_not_found') }),
  },
  {
    method: 'GET',
    route: '/v1/agentify/markdown',
    group: 'api-key',
    probe: () => ({
      path: '/v1/agentify/markdown?url=https%3A%2F%2Fexample.com%2F',
      expect: { status: 422, error: 'page_host_not_owned' },
    }),
  },
  { method: 'GET', route: '/v1/api-keys', group: 'member', probe: () => ({ path: '/v1/api-keys/', expect: { status: 200 } }) },
  { method: 'POST', route: '/v1/api-keys', group: 'admin', probe: () => ({ path: '/v1/api-keys', body: {}, expect: invalidBody }) },
  {
    method: 'DELETE',
    route: '/v1/api-keys/{apiKeyId}',
    group: 'admin',
    probe: ({ b }) => ({ path: `/v1/api-keys/${b.apiKeyId}`, expect: notFound('api_key_not_found') }),
  },
];

for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const world = await managementWorld(t, provider);

    t.test('the table names every route of the OpenAPI document, and only those', async (t) => {
      const { body: document } = await world.api.get('/v1/openapi.json');
      const documented = Object.entries(document.paths as Record<string, object>)
        .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
        .sort();
      t.same(routes.map((r) => `${r.method} ${r.route}`).sort(), documented);
    });

    await checkRouteGroups(t, world, routes);
  });
}
