import { z } from 'zod';
import { newId } from '../../../shared/ids.js';
import { createPlanInput, plan } from '../../../shared/schemas/plans.js';
import { withUniqueCodes } from '../../db/constraints.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedService } from '../owned.js';
import { checkPlanShape, defaultInterval, defaultVerifiedEmailPolicy } from './rules.js';
import { toPlanWire } from './wire.js';

export const createPlan = catalogWriteProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/plans', tags: ['Plans'], summary: 'Create a plan of a service' },
    successStatus: 201,
    errors: ['service_not_found', 'duplicate_slug'],
  })
  .input(createPlanInput)
  .output(z.object({ plan }))
  .mutation(async ({ ctx, input }) => {
    const { organizationId } = ctx.actor;
    const service = await ownedService(ctx.db, organizationId, input.serviceId);
    const kind = input.kind ?? 'standard';
    const data = {
      id: newId('plan'),
      organizationId,
      serviceId: service.id,
      name: input.name,
      slug: input.slug,
      kind,
      billingMode: input.billingMode,
      interval: input.interval ?? defaultInterval(input.billingMode),
      basePriceMicros: input.basePriceUsd ?? 0n,
      includedCreditMicros: input.includedCreditUsd ?? 0n,
      includedCreditUnits: input.includedCreditUnits ?? 0,
      includedCreditUnitLabel: input.includedCreditUnitLabel ?? null,
      minimumPurchaseMicros: input.minimumPurchaseUsd ?? 0n,
      verifiedEmailPolicy: input.verifiedEmailPolicy ?? defaultVerifiedEmailPolicy(kind),
      maxClaims: input.maxClaims ?? null,
    };
    checkPlanShape(data);
    const row = await withUniqueCodes({ Plan: 'duplicate_slug' }, () =>
      changeCatalog(ctx.db, service.sellerId, (tx) => tx.plan.create({ data })),
    );
    return { plan: toPlanWire(row) };
  });
