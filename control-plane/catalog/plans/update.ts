import { z } from 'zod';
import { plan, updatePlanInput } from '../../../shared/schemas/plans.js';
import { withUniqueCodes } from '../../db/constraints.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedPlan } from '../owned.js';
import { checkPlanShape } from './rules.js';
import { toPlanWire } from './wire.js';

/** Changes the fields given. `billingMode` and `kind` are fixed: buyers hold accounts under them. */
export const updatePlan = catalogWriteProcedure
  .meta({
    openapi: { method: 'PATCH', path: '/v1/plans/{planId}', tags: ['Plans'], summary: 'Update a plan' },
    errors: ['plan_not_found', 'duplicate_slug'],
  })
  .input(updatePlanInput)
  .output(z.object({ plan }))
  .mutation(async ({ ctx, input }) => {
    const existing = await ownedPlan(ctx.db, ctx.actor.organizationId, input.planId);
    const { service } = existing;
    const data = {
      name: input.name,
      slug: input.slug,
      interval: input.interval,
      basePriceMicros: input.basePriceUsd,
      includedCreditMicros: input.includedCreditUsd,
      includedCreditUnits: input.includedCreditUnits,
      includedCreditUnitLabel: input.includedCreditUnitLabel,
      minimumPurchaseMicros: input.minimumPurchaseUsd,
      verifiedEmailPolicy: input.verifiedEmailPolicy,
      maxClaims: input.maxClaims,
    };
    checkPlanShape({
      kind: existing.kind,
      billingMode: existing.billingMode,
      interval: data.interval ?? existing.interval,
      basePriceMicros: data.basePriceMicros ?? existing.basePriceMicros,
    });
    const row = await withUniqueCodes({ Plan: 'duplicate_slug' }, () =>
      changeCatalog(ctx.db, service.sellerId, (tx) => tx.plan.update({ where: { id: existing.id }, data })),
    );
    return { plan: toPlanWire(row) };
  });
