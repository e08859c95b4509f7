import { z } from 'zod';
import { idSchema, timestamp } from '../../shared/schemas/fields.js';
import { router } from '../trpc/init.js';
import { catalogWriteProcedure } from '../trpc/procedures.js';
import { advanceAccountClock } from './test-clock.js';

/** `/v1/sandbox/accounts/{accessId}/clock`: a sandbox account's test clock. */
const MAX_ADVANCE_SECONDS = 10 * 366 * 86_400;

export const advanceClockRoute = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/sandbox/accounts/{accessId}/clock',
      tags: ['Sandbox'],
      summary: "Move a sandbox account's clock forward (to its renewal or expiry)",
    },
    errors: ['access_not_found', 'seller_not_in_sandbox'],
  })
  .input(
    z.strictObject({
      accessId: idSchema('access'),
      advanceSeconds: z.int().min(1).max(MAX_ADVANCE_SECONDS).meta({ description: 'How far into its future the account moves' }),
    }),
  )
  .output(
    z.object({
      account: z.object({
        accessId: z.string(),
        status: z.string(),
        stateVersion: z.int(),
        periodStart: timestamp.nullable(),
        periodEnd: timestamp.nullable(),
      }),
    }),
  )
  .mutation(async ({ ctx, input }) => {
    const access = await advanceAccountClock(ctx.db, ctx.actor.organizationId, input.accessId, input.advanceSeconds);
    ctx.accountWrites?.wake();
    return {
      account: {
        accessId: access.id,
        status: access.status,
        stateVersion: access.stateVersion,
        periodStart: access.periodStart?.toISOString() ?? null,
        periodEnd: access.periodEnd?.toISOString() ?? null,
      },
    };
  });

export const sandboxAccountsRouter = router({ advanceClock: advanceClockRoute });
