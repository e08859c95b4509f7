import { router } from '../trpc/init.js';
import { sandboxAccountsRouter } from './accounts.js';
import { sandboxAgentsRouter } from './agents.js';
import { sandboxCallRoute } from './calls.js';
import { sandboxPaymentsRouter } from './payments.js';
import { sandboxPurchaseRoute } from './purchases.js';

/** The sandbox endpoints under /v1/sandbox (docs/decisions.md#D-229). */
export const sandboxRouter = router({
  agents: sandboxAgentsRouter,
  calls: router({ make: sandboxCallRoute }),
  purchases: router({ make: sandboxPurchaseRoute }),
  accounts: sandboxAccountsRouter,
  payments: sandboxPaymentsRouter,
});
