import { apiKeysRouter } from './accounts/api-keys.js';
import { organizationsRouter } from './accounts/organizations.js';
import { sessionRouter } from './accounts/session.js';
import { agentifyMarkdownRoute } from './agentify/markdown.js';
import { analyticsRouter } from './analytics/sellers.js';
import { stripeConnectRouter } from './card-payments/stripe-connect.js';
import { encryptionKeysRouter } from './catalog/encryption-keys.js';
import { metersRouter } from './catalog/meters.js';
import { planMeterPricesRouter } from './catalog/plan-meter-prices.js';
import { plansRouter } from './catalog/plans.js';
import { routesRouter } from './catalog/routes.js';
import { sellersRouter } from './catalog/sellers.js';
import { servicesRouter } from './catalog/services.js';
import { signingSecretsRouter } from './catalog/signing-secrets.js';
import { accountWritesRouter } from './delivery/account-writes.js';
import { discoveryRouter } from './discovery/discovery.js';
import { reportPageViewProcedure } from './page-views/page-views.js';
import { sandboxRouter } from './sandbox/router.js';
import { accountsRouter } from './storefront/accounts.js';
import { router } from './trpc/init.js';
import { usageRouter } from './usage/router.js';

/**
 * The management API: every procedure carries an OpenAPI route and is served under /v1 only.
 * The proxy's API is another router (internal/router.ts), the only one served on /trpc.
 */
export const appRouter = router({
  auth: sessionRouter,
  organizations: organizationsRouter,
  apiKeys: apiKeysRouter,
  sellers: sellersRouter,
  signingSecrets: signingSecretsRouter,
  encryptionKeys: encryptionKeysRouter,
  services: servicesRouter,
  meters: metersRouter,
  plans: plansRouter,
  planMeterPrices: planMeterPricesRouter,
  routes: routesRouter,
  accounts: accountsRouter,
  accountWrites: accountWritesRouter,
  usage: usageRouter,
  pageViews: router({ report: reportPageViewProcedure }),
  analytics: analyticsRouter,
  discovery: discoveryRouter,
  sandbox: sandboxRouter,
  agentify: router({ markdown: agentifyMarkdownRoute }),
  stripeConnect: stripeConnectRouter,
});

export type AppRouter = typeof appRouter;
