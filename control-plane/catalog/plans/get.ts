import { z } from 'zod';
import { plan, planId } from '../../../shared/schemas/plans.js';
import { catalogReadProcedure } from '../../trpc/procedures.js';
import { ownedPlan } from '../owned.js';
import { toPlanWire } from './wire.js';

export const getPlan = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/plans/{planId}', tags: ['Plans'], summary: 'Read a plan' },
    errors: ['plan_not_found'],
  })
  .input(z.object({ planId }))
  .output(z.object({ plan }))
  .query(async ({ ctx, input }) => ({ plan: toPlanWire(await ownedPlan(ctx.db, ctx.actor.organizationId, input.planId)) }));
