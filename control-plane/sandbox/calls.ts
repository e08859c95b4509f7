import { z } from 'zod';
import { idSchema } from '../../shared/schemas/fields.js';
import { catalogWriteProcedure } from '../trpc/procedures.js';
import { agentExchange } from './exchange-wire.js';
import { payAsAgent } from './pay-as-agent.js';
import { ownedTestAgent } from './test-agents.js';

/** `POST /v1/sandbox/calls`: a call to the sandbox seller's pay URL as a test agent, paid when asked. */
export const sandboxCallRoute = catalogWriteProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/sandbox/calls', tags: ['Sandbox'], summary: 'Make a paid call as a test agent' },
    errors: ['test_agent_not_found', 'seller_not_in_sandbox', 'upstream_error', 'upstream_timeout'],
  })
  .input(
    z.strictObject({
      agentId: idSchema('agent'),
      method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).optional(),
      path: z
        .string()
        .max(2048)
        .regex(/^\/[^\s#]*$/, 'path: a path and query starting with /')
        .meta({ description: 'The path and query on the pay URL' }),
      body: z.string().max(65_536).optional().meta({ description: 'A JSON body, sent as application/json' }),
    }),
  )
  .output(z.object({ exchange: agentExchange }))
  .mutation(async ({ ctx, input }) => {
    const agent = await ownedTestAgent(ctx.db, ctx.masterKey, ctx.actor.organizationId, input.agentId);
    const exchange = await payAsAgent(ctx.config, agent, { method: input.method ?? 'GET', path: input.path, body: input.body });
    return { exchange };
  });
