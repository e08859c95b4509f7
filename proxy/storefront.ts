import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { readJsonBody } from '../runtime/json-body.js';
import { AGENT_PATHS } from '../shared/agent-paths.js';
import type { PaySeller } from '../shared/contract.js';
import { ApiError } from '../shared/errors.js';
import { idSchema } from '../shared/schemas/fields.js';
import { describeIssues } from '../shared/validation-message.js';
import { authRecipe } from './agent-auth.js';
import type { ProxyServices } from './context.js';
import { publicOrigin } from './public-origin.js';

/**
 * The storefront's paths on the pay URL: hub's, never the seller's (they are not forwarded). Each
 * is for registered agents. `POST /extend` applies every refusal the spec makes before payment
 * (docs/decisions.md › Storefront); taking the payment and opening the account is not built yet,
 * so a purchase that passes them, a receipt and a key redeem answer 501 saying so.
 */
const STOREFRONT_PATHS = new Set<string>([AGENT_PATHS.extend, AGENT_PATHS.receipt, AGENT_PATHS.redeem]);

const NOT_YET = 'Buying plans at the pay URL is not available on this hub yet; calls are paid one by one.';

const extendBody = z
  .object({
    planId: idSchema('plan'),
    amountUsd: z.string().max(40, 'amountUsd is too long').optional(),
  })
  .strict();

export function isStorefrontPath(path: string): boolean {
  return STOREFRONT_PATHS.has(path);
}

export async function handleStorefront(
  path: string,
  req: IncomingMessage,
  _res: ServerResponse,
  seller: PaySeller,
  services: ProxyServices,
): Promise<void> {
  const caller = await services.agents.identify(req.headers.authorization);
  if (caller.kind !== 'agent') {
    throw new ApiError('bearer_required', 'The storefront is for registered agents.', {
      auth: authRecipe(publicOrigin(req, services.config.proxy.trustProxy)),
    });
  }
  const method = path === AGENT_PATHS.receipt ? 'GET' : 'POST';
  if (req.method !== method && !(method === 'GET' && req.method === 'HEAD'))
    throw new ApiError('method_not_allowed', `Use ${method} ${path}.`);
  if (path !== AGENT_PATHS.extend) throw new ApiError('entitlements_not_available', NOT_YET);

  const parsed = extendBody.safeParse(await readJsonBody(req, 4_096));
  if (!parsed.success) throw new ApiError('invalid_request', describeIssues(parsed.error.issues));
  const terms = await services.controlPlane.call('purchaseTerms', {
    sellerId: seller.id,
    planId: parsed.data.planId,
    ...(parsed.data.amountUsd === undefined ? {} : { amountUsd: parsed.data.amountUsd }),
  });
  throw new ApiError('entitlements_not_available', NOT_YET, { terms });
}
