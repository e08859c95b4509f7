import { z } from 'zod';
import { AGENT_PATHS } from '../../shared/agent-paths.js';
import { idSchema } from '../../shared/schemas/fields.js';
import { catalogWriteProcedure } from '../trpc/procedures.js';
import { agentExchange } from './exchange-wire.js';
import { payAsAgent } from './pay-as-agent.js';
import { ownedTestAgent } from './test-agents.js';

/**
 * `POST /v1/sandbox/purchases`: a plan bought (or, with `accessId`, an account renewed or topped
 * up) at the sandbox seller's `POST /extend`, as a test agent, paid when asked.
 */
export const sandboxPurchaseRoute = catalogWriteProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/sandbox/purchases', tags: ['Sandbox'], summary: 'Buy, renew or top up a plan as a test agent' },
    errors: ['test_agent_not_found', 'seller_not_in_sandbox', 'upstream_error', 'upstream_timeout'],
  })
  .input(
    z.strictObject({
      agentId: idSchema('agent'),
      planId: idSchema('plan').optional(),
      accessId: idSchema('access').optional().meta({ description: 'The account to renew or top up' }),
      amountUsd: z.string().max(40).optional().meta({ description: 'The credit to buy, for a credit plan' }),
    }),
  )
  .output(z.object({ exchange: agentExchange }))
  .mutation(async ({ ctx, input }) => {
    const agent = await ownedTestAgent(ctx.db, ctx.masterKey, ctx.actor.organizationId, input.agentId);
    const query = input.accessId ? `?accessId=${input.accessId}` : '';
    const body = JSON.stringify({ planId: input.planId, amountUsd: input.amountUsd });
    const exchange = await payAsAgent(ctx.config, agent, { method: 'POST', path: `${AGENT_PATHS.extend}${query}`, body });
    return { exchange };
  });
