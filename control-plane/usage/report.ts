import { formatUsd } from '../../shared/money.js';
import type { Db } from '../db/client.js';
import { routeProcedure, servedRoute } from '../trpc/served-route.js';
import { recordUsage } from './record.js';
import { type ReportUsageInput, type ReportUsageOutput, reportUsageInput, reportUsageOutput } from './wire.js';

export const reportUsageRoute = servedRoute({
  path: '/v1/usage',
  scope: 'usage:write',
  input: reportUsageInput,
  run: (services, organizationId, input) => reportUsage(services.db, organizationId, input),
});

export const reportUsageProcedure = routeProcedure(
  reportUsageRoute,
  {
    openapi: {
      tags: ['Usage'],
      summary: 'Record what a request used',
      description:
        'Draws included units, then credit, atomically. A replayed idempotencyKey with the same body answers 200 with duplicate: true and changes nothing.',
    },
    errors: [
      'access_inactive',
      'plan_expired',
      'usage_exhausted',
      'meter_not_priced',
      'idempotency_key_reused',
      'service_not_found',
      'access_not_found',
      'meter_not_found',
    ],
  },
  reportUsageOutput,
);

/** The usage report (spec: Endpoints › Usage report), on the wire. */
export async function reportUsage(db: Db, organizationId: string, input: ReportUsageInput): Promise<ReportUsageOutput> {
  const recorded = await recordUsage(db, {
    organizationId,
    idempotencyKey: input.idempotencyKey,
    requestId: input.zcRequestId,
    serviceSlug: input.serviceSlug,
    usage: input.usage.map((item) => ({ meterSlug: item.meterSlug, quantity: BigInt(item.quantity) })),
    source: 'report',
  });
  return { id: recorded.id, duplicate: recorded.duplicate, costUsd: formatUsd(recorded.costMicros) };
}
