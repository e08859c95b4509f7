import { z } from 'zod';
import type { Plan } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { formatUsd } from '../../shared/money.js';
import {
  type BillingMode,
  createPlanInput,
  type Interval,
  type PlanKind,
  plan,
  planId,
  updatePlanInput,
} from '../../shared/schemas/plans.js';
import { serviceId } from '../../shared/schemas/services.js';
import { withUniqueCodes } from '../db/constraints.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure, catalogWriteProcedure } from '../trpc/procedures.js';
import { changeCatalog, ownedPlan, ownedService, refuseWhileBuyersHoldPlans, refuseWhilePurchasesOpen } from './guards.js';

type PlanWire = z.infer<typeof plan>;

export function toPlanWire(row: Plan): PlanWire {
  return {
    id: row.id,
    serviceId: row.serviceId,
    name: row.name,
    slug: row.slug,
    kind: row.kind as PlanWire['kind'],
    billingMode: row.billingMode as PlanWire['billingMode'],
    interval: row.interval as PlanWire['interval'],
    basePriceUsd: formatUsd(row.basePriceMicros),
    includedCreditUsd: formatUsd(row.includedCreditMicros),
    includedCreditUnits: row.includedCreditUnits,
    includedCreditUnitLabel: row.includedCreditUnitLabel,
    minimumPurchaseUsd: formatUsd(row.minimumPurchaseMicros),
    verifiedEmailPolicy: row.verifiedEmailPolicy as PlanWire['verifiedEmailPolicy'],
    remintPolicy: row.remintPolicy as PlanWire['remintPolicy'],
    maxClaims: row.maxClaims,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

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
      // The spec's mint rules read as one key per account unless the seller says otherwise.
      remintPolicy: input.remintPolicy ?? 'rotating',
      maxClaims: input.maxClaims ?? null,
    };
    checkPlanShape(data);
    const row = await withUniqueCodes({ Plan: 'duplicate_slug' }, () =>
      changeCatalog(ctx.db, service.sellerId, (tx) => tx.plan.create({ data })),
    );
    return { plan: toPlanWire(row) };
  });

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
      await refuseWhilePurchasesOpen(tx, [existing.id]);
      await tx.plan.delete({ where: { id: existing.id } });
    });
  });

export const getPlan = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/plans/{planId}', tags: ['Plans'], summary: 'Read a plan' },
    errors: ['plan_not_found'],
  })
  .input(z.object({ planId }))
  .output(z.object({ plan }))
  .query(async ({ ctx, input }) => ({ plan: toPlanWire(await ownedPlan(ctx.db, ctx.actor.organizationId, input.planId)) }));

export const listPlans = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/plans', tags: ['Plans'], summary: "List a service's plans" },
    errors: ['service_not_found'],
  })
  .input(z.object({ serviceId }))
  .output(z.object({ plans: z.array(plan) }))
  .query(async ({ ctx, input }) => {
    await ownedService(ctx.db, ctx.actor.organizationId, input.serviceId);
    const rows = await ctx.db.plan.findMany({ where: { serviceId: input.serviceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    return { plans: rows.map(toPlanWire) };
  });

/**
 * How a plan's fields must fit together (hub's rules where the spec is silent; see
 * docs/decisions.md): pay-as-you-go is charged per call, so it has no period, no base price and
 * is never a free trial; subscriptions renew, so they have a month or year period.
 */

export function defaultInterval(billingMode: BillingMode): Interval {
  return billingMode === 'subscription' || billingMode === 'subscription_usage' ? 'month' : 'none';
}

/** Free trials ask for a verified email unless the seller relaxes it (spec: Resources › Plan). */
export function defaultVerifiedEmailPolicy(kind: PlanKind) {
  return kind === 'free_trial' ? 'required' : 'off';
}

export function checkPlanShape(plan: { kind: string; billingMode: string; interval: string; basePriceMicros: bigint }): void {
  if (plan.billingMode === 'payg') {
    if (plan.interval !== 'none') throw ApiError.validation('interval: a payg plan has no period; use none');
    if (plan.basePriceMicros !== 0n) throw ApiError.validation('basePriceUsd: a payg plan has no base price; price its meters instead');
    if (plan.kind === 'free_trial') throw ApiError.validation('kind: a free_trial plan cannot be payg');
  }
  if ((plan.billingMode === 'subscription' || plan.billingMode === 'subscription_usage') && plan.interval === 'none') {
    throw ApiError.validation('interval: a subscription renews every month or year');
  }
  if (plan.kind === 'free_trial' && plan.basePriceMicros !== 0n) {
    throw ApiError.validation('basePriceUsd: a free_trial plan is free; its base price is 0');
  }
}

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
      remintPolicy: input.remintPolicy,
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

export const plansRouter = router({ create: createPlan, get: getPlan, list: listPlans, update: updatePlan, delete: deletePlan });
