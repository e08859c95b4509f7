import { z } from 'zod';
import { planId } from '../../../shared/schemas/plans.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { refuseWhileBuyersHoldPlans } from '../in-use.js';
import { ownedPlan } from '../owned.js';

/** Deletes a plan with its meter prices, unless buyers hold accounts on it. */
export const deletePlan = catalogWriteProcedure
  .meta({
    openapi: { method: 'DELETE', path: '/v1/plans/{planId}', tags: ['Plans'], summary: 'Delete a plan with its meter prices' },
    successStatus: 204,
    errors: ['plan_not_found', 'resource_in_use'],
  })
  .input(z.object({ planId }))
  .output(z.void())
  .mutation(async ({ ctx, input }) => {
    const existing = await ownedPlan(ctx.db, ctx.actor.organizationId, input.planId);
    const { service } = existing;
    await changeCatalog(ctx.db, service.sellerId, async (tx) => {
      await refuseWhileBuyersHoldPlans(tx, { planId: existing.id });
      await tx.plan.delete({ where: { id: existing.id } });
    });
  });
