import { z } from 'zod';
import { idSchema, timestamp } from './fields.js';

export const accessId = idSchema('access');

const usd = z.string().meta({ description: 'USD, six decimals' });

/** A buyer's account with a seller (`hubacc_`), as the seller sees it. */
export const account = z
  .object({
    accessId,
    status: z.enum(['active', 'suspended', 'canceled']),
    provisioningState: z
      .enum(['pending', 'provisioning', 'active', 'failed'])
      .meta({ description: 'Whether a stateful seller has the account; active at once for other sellers' }),
    deliveryStatus: z.string().nullable().meta({ description: "The newest account write's delivery; null for sellers that take none" }),
    agentId: z.string(),
    buyerId: z.string().nullable(),
    plan: z.object({ id: z.string(), slug: z.string(), name: z.string(), billingMode: z.string(), interval: z.string() }),
    period: z.object({ start: timestamp.nullable(), end: timestamp.nullable() }),
    creditGrantedUsd: usd.nullable().meta({ description: 'Total ever granted; null when the plan has no credit component' }),
    creditReversedUsd: usd,
    balanceUsd: usd.nullable().meta({ description: 'Credit left to draw on' }),
    includedUnits: z.array(z.object({ meterSlug: z.string(), includedUnits: z.int(), usedUnits: z.int() })),
    creditUnits: z
      .object({ label: z.string().nullable(), includedUnits: z.int(), usedUnits: z.int() })
      .nullable()
      .meta({ description: "The plan's credit units this period, shared by its priced meters; null when it grants none" }),
    stateVersion: z.int(),
    createdAt: timestamp,
    canceledAt: timestamp.nullable(),
    refundOwedUsd: usd.meta({
      description: 'Paid for an account the seller never took (its write failed for good): owed back by the seller',
    }),
    heldUsd: usd.meta({ description: 'Paid into the escrow for the account and held there until the seller has it' }),
    refunds: z
      .array(z.object({ paymentId: z.string(), amountUsd: usd, transactionHash: z.string().nullable() }))
      .meta({ description: 'Held payments returned to their payer on chain, because the seller never took the account' }),
  })
  .meta({ id: 'Account' });
