import { z } from 'zod';
import { formatUsd } from '../../shared/money.js';
import { idSchema, timestamp, usdInput, usdOutput } from '../../shared/schemas/fields.js';
import { sellerId } from '../../shared/schemas/sellers.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure, catalogWriteProcedure } from '../trpc/procedures.js';
import { ownedSandboxSeller } from './sandbox-seller.js';
import { createTestAgent } from './test-agents.js';

/** `/v1/sandbox/agents`: test agents of a sandbox seller, with funded wallets on the test rail. */
const DEFAULT_FUND_MICROS = 10_000_000n;
const MAX_FUND_MICROS = 1_000_000_000n;

const testAgent = z
  .object({
    agentId: idSchema('agent'),
    sellerId,
    walletAddress: z.string().meta({ description: 'The wallet on the test rail hub pays from as this agent' }),
    createdAt: timestamp,
  })
  .meta({ id: 'TestAgent' });

export const createTestAgentRoute = catalogWriteProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/sandbox/agents', tags: ['Sandbox'], summary: 'Create a test agent with a funded test wallet' },
    successStatus: 201,
    errors: ['seller_not_found', 'seller_not_in_sandbox', 'service_unavailable'],
  })
  .input(
    z.strictObject({
      sellerId,
      fundUsd: usdInput
        .optional()
        .refine((m) => m === undefined || m <= MAX_FUND_MICROS, 'fundUsd: at most 1000.000000')
        .meta({ description: 'Test tokens minted to the wallet (default 10.000000, at most 1000.000000)' }),
    }),
  )
  .output(
    z.object({
      testAgent: testAgent.extend({
        token: z.string().meta({ description: "The agent's bearer token, shown this once" }),
        fundedUsd: usdOutput,
        fundTransaction: z.string().nullable(),
      }),
    }),
  )
  .mutation(async ({ ctx, input }) => {
    await ownedSandboxSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const fund = input.fundUsd ?? DEFAULT_FUND_MICROS;
    const made = await createTestAgent(ctx.db, ctx.masterKey, ctx.rails, input.sellerId, fund);
    return {
      testAgent: {
        agentId: made.agentId,
        sellerId: input.sellerId,
        walletAddress: made.walletAddress,
        createdAt: new Date().toISOString(),
        token: made.token,
        fundedUsd: formatUsd(fund),
        fundTransaction: made.fundTransaction,
      },
    };
  });

export const listTestAgents = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/sandbox/agents', tags: ['Sandbox'], summary: "A sandbox seller's test agents" },
    errors: ['seller_not_found', 'seller_not_in_sandbox'],
  })
  .input(z.object({ sellerId }))
  .output(z.object({ testAgents: z.array(testAgent) }))
  .query(async ({ ctx, input }) => {
    await ownedSandboxSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const rows = await ctx.db.sandboxAgent.findMany({
      where: { sellerId: input.sellerId },
      include: { agent: { select: { walletAddress: true } } },
      orderBy: [{ createdAt: 'asc' }, { agentId: 'asc' }],
    });
    return {
      testAgents: rows.map((r) => ({
        agentId: r.agentId,
        sellerId: r.sellerId,
        walletAddress: r.agent.walletAddress,
        createdAt: r.createdAt.toISOString(),
      })),
    };
  });

export const sandboxAgentsRouter = router({ create: createTestAgentRoute, list: listTestAgents });
