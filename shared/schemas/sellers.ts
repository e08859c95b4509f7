import { z } from 'zod';
import { caip2Network, distinctList, evmAddress, hostname, httpUrl, idSchema, jsonBoolean, name, slug, timestamp } from './fields.js';

/** Sellers on the wire: what the proxy needs to serve a pay URL, and what a seller edits. */

export const MAX_NETWORKS = 20;

/** When a paid call settles (docs/decisions.md › Settlement › Settling after the answer). */
export const settlementTiming = z.enum(['before_response', 'after_response']).meta({
  description:
    'When a paid call settles: before_response (the default) answers once the payment is settled on chain; after_response answers at once, `hub-billing` status settling, and settles right after',
});
export type SettlementTiming = z.infer<typeof settlementTiming>;
export const MAX_HOSTNAMES = 20;

/** The x402 schemes a seller's 402 can offer (docs/decisions.md#D-280). */
export const X402_SCHEMES = ['exact', 'batch-settlement'] as const;
export type X402Scheme = (typeof X402_SCHEMES)[number];
/** A stored list, read back: only schemes hub knows, `exact` always first. */
export function x402SchemesOf(json: string): X402Scheme[] {
  const stored = JSON.parse(json) as string[];
  return X402_SCHEMES.filter((scheme) => scheme === 'exact' || stored.includes(scheme));
}

export const x402Schemes = distinctList(z.enum(X402_SCHEMES), X402_SCHEMES.length)
  .refine((schemes) => schemes.includes('exact'), 'must include exact: every 402 offers it, beside batch-settlement when listed')
  .meta({
    description:
      'The x402 schemes its 402 offers, for the same price: exact (always; the default is ["exact"]) and batch-settlement (a session: one deposit into a channel, then a signed voucher per call)',
  });

export const seller = z
  .object({
    id: idSchema('seller'),
    name: z.string(),
    slug: z.string().meta({ description: 'DNS label; the pay host is {slug}.{pay domain}, so it is unique across hub' }),
    payHost: z.string().meta({ description: 'The host agents call: {slug}.{pay domain}' }),
    upstreamBaseUrl: z.string(),
    payToAddress: z.string().nullable().meta({ description: 'EVM address that receives settlements' }),
    networks: z.array(z.string()).meta({ description: 'CAIP-2 ids of the networks the seller accepts payment on' }),
    hostnames: z.array(z.string()).meta({ description: 'Custom hostnames that also serve the pay URL' }),
    settlement: settlementTiming,
    x402Schemes: z.array(z.enum(X402_SCHEMES)).meta({ description: 'The x402 schemes its 402 offers' }),
    sandbox: z.boolean().meta({
      description:
        'A sandbox seller: its traffic carries hub-sandbox: 1 and sb=1, it is paid on the test rail, and /v1/sandbox drives it. Set at creation, never changed',
    }),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Seller' });

export const sellerId = idSchema('seller');

export const createSellerInput = z.strictObject({
  name,
  slug,
  upstreamBaseUrl: httpUrl,
  payToAddress: evmAddress.optional(),
  networks: distinctList(caip2Network, MAX_NETWORKS).optional(),
  hostnames: distinctList(hostname, MAX_HOSTNAMES).optional(),
  settlement: settlementTiming.optional(),
  x402Schemes: x402Schemes.optional(),
  sandbox: jsonBoolean().optional().meta({ description: 'Create the seller in sandbox (default false); it cannot be changed later' }),
});

export const updateSellerInput = z.strictObject({
  sellerId,
  name: name.optional(),
  slug: slug.optional(),
  upstreamBaseUrl: httpUrl.optional(),
  payToAddress: evmAddress.nullable().optional(),
  networks: distinctList(caip2Network, MAX_NETWORKS).optional(),
  hostnames: distinctList(hostname, MAX_HOSTNAMES).optional(),
  settlement: settlementTiming.optional(),
  x402Schemes: x402Schemes.optional(),
});

export const statefulAccess = z
  .object({
    accessEndpointUrl: z.string().meta({ description: 'Where account writes go; key mints go to {accessEndpointUrl}/{accessId}/keys' }),
    salesEnabled: z.boolean().meta({ description: 'Can buyers make new purchases' }),
    servicingEnabled: z.boolean().meta({ description: 'Can existing customers recover and rotate keys' }),
  })
  .meta({ id: 'StatefulAccess' });

/** The spec's later variant of the same read: whether the seller is stateful at all. */
export const statefulAccessLater = z
  .object({
    stateful: z.boolean().meta({ description: 'The seller keeps its own copy of each account, kept current by signed account writes' }),
    accessEndpointUrl: z.string().meta({ description: 'Where account writes go; key mints go to {accessEndpointUrl}/{accessId}/keys' }),
  })
  .meta({ id: 'StatefulAccessLater' });

export const putStatefulAccessInput = z
  .strictObject({
    sellerId,
    accessEndpointUrl: httpUrl.nullable().optional().meta({ description: 'The override; null returns to the default endpoint' }),
    stateful: jsonBoolean()
      .optional()
      .meta({ description: 'Take account writes (purchases then stay reserved until the seller acknowledges them)' }),
    accountWriteVariant: z
      .enum(['original', 'later'])
      .optional()
      .meta({ description: 'Which variant of the account write and key mint bodies the seller takes' }),
  })
  .refine(
    (v) => v.accessEndpointUrl !== undefined || v.stateful !== undefined || v.accountWriteVariant !== undefined,
    'Send accessEndpointUrl, stateful or accountWriteVariant',
  );

/** What `PUT …/stateful-access` answers: the first variant, whether the seller is stateful, and which bodies it takes. */
export const statefulAccessSettings = statefulAccess
  .extend({ stateful: z.boolean(), accountWriteVariant: z.enum(['original', 'later']) })
  .meta({ id: 'StatefulAccessSettings' });
