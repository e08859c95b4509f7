import { apiKeysRouter } from './accounts/api-keys.js';
import { organizationsRouter } from './accounts/organizations.js';
import { sessionRouter } from './accounts/session.js';
import { agentifyMarkdownRoute } from './agentify/agentify-api.js';
import { analyticsRouter } from './analytics/analytics-api.js';
import { encryptionKeysRouter } from './catalog/encryption-keys.js';
import { metersRouter } from './catalog/meters.js';
import { planMeterPricesRouter } from './catalog/plan-meter-prices.js';
import { plansRouter } from './catalog/plans.js';
import { sellersRouter } from './catalog/sellers.js';
import { servicesRouter } from './catalog/services.js';
import { signingSecretsRouter } from './catalog/signing-secrets.js';
import { accountWritesRouter } from './delivery/account-writes-api.js';
import { internalRouter } from './internal/router.js';
import { reportPageViewProcedure } from './page-views/report.js';
import { accountsRouter } from './storefront/accounts-api.js';
import { router } from './trpc/init.js';
import { usageRouter } from './usage/router.js';

/** Every procedure of the control-plane. Public ones also carry an OpenAPI route under /v1. */
export const appRouter = router({
  internal: internalRouter,
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
  accounts: accountsRouter,
  accountWrites: accountWritesRouter,
  usage: usageRouter,
  pageViews: router({ report: reportPageViewProcedure }),
  analytics: analyticsRouter,
  agentify: router({ markdown: agentifyMarkdownRoute }),
});

export type AppRouter = typeof appRouter;
