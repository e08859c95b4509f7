import type { Db } from '../db/client.js';
import { routeProcedure, servedRoute } from '../trpc/served-route.js';
import { allowance } from './allowance.js';
import { usageReader } from './reader.js';
import { resolveRequest } from './resolve.js';
import { type CheckUsageInput, type CheckUsageOutput, checkUsageInput, checkUsageOutput } from './wire.js';

export const checkUsageRoute = servedRoute({
  path: '/v1/usage/check',
  scope: 'usage:read',
  input: checkUsageInput,
  run: (services, organizationId, input) => checkUsage(services.db, organizationId, input),
});

export const checkUsageProcedure = routeProcedure(
  checkUsageRoute,
  {
    openapi: {
      tags: ['Usage'],
      summary: 'May this request use this much?',
      description:
        'Always 200. A denial names the first applicable reason in this order: service_not_found, access_not_found, access_inactive, plan_expired, meter_not_found, meter_not_priced, usage_exhausted. Records nothing.',
    },
  },
  checkUsageOutput,
);

/**
 * The allowance check (spec: Endpoints › Usage check): resolves the request, then asks whether
 * each item fits, at its `maxQuantity` when given, else its `quantity`, else the price's
 * `defaultMaxQuantity`. Reads only.
 */
export async function checkUsage(db: Db, organizationId: string, input: CheckUsageInput, now = new Date()): Promise<CheckUsageOutput> {
  const reader = usageReader(db);
  const resolved = await resolveRequest(reader, organizationId, input.zcRequestId, input.serviceSlug, 'check');
  if (!resolved.ok) return { allowed: false, reason: resolved.reason };
  const demands = input.usage.map((item) => {
    const asked = item.maxQuantity ?? item.quantity;
    return { meterSlug: item.meterSlug, quantity: asked == null ? null : BigInt(asked) };
  });
  const allowed = await allowance(reader, resolved, demands, 'check', now);
  return allowed.ok ? { allowed: true, reason: null } : { allowed: false, reason: allowed.reason };
}
