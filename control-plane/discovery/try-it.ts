import { z } from 'zod';
import { sellerId } from '../../shared/schemas/sellers.js';
import { ownedSeller } from '../catalog/guards.js';
import { paymentRequiredOf, requestPayUrl } from '../pay-url/pay-url-request.js';
import { catalogReadProcedure } from '../trpc/procedures.js';

/**
 * "Try it" (docs/decisions.md#D-255): the answer an agent without credentials gets from the
 * seller's pay URL, asked by hub itself, so a seller (the dashboard) sees its own 402 as agents see
 * it. Nothing is paid; the seller's API sees one unpaid request, as from any agent.
 */

const tryInput = z.strictObject({
  sellerId,
  method: z.enum(['GET', 'POST']).optional().meta({ description: 'Default GET' }),
  path: z
    .string()
    .max(2_048, 'must be at most 2048 characters')
    .regex(/^\/[\x21-\x7e]*$/, 'must be a path on the pay URL, starting with /, in printable ASCII')
    .optional()
    .meta({ description: 'Default /', example: '/forecast' }),
});

const tryAnswer = z
  .object({
    status: z.int(),
    headers: z.record(z.string(), z.string()).meta({ description: 'The payment headers of the answer, and its content type' }),
    paymentRequired: z
      .unknown()
      .nullable()
      .meta({ description: 'The x402 `payment-required` header, decoded; null when the answer has none' }),
    body: z.string().meta({ description: 'The answer, its first 16 KiB' }),
  })
  .meta({ id: 'TryIt' });

export const tryPayUrlRoute = catalogReadProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/sellers/{sellerId}/try',
      tags: ['Sellers'],
      summary: 'What an agent without credentials gets from the pay URL: the 402 and its payment headers',
    },
    errors: ['seller_not_found', 'upstream_error', 'upstream_timeout'],
  })
  .input(tryInput)
  .output(z.object({ answer: tryAnswer }))
  .mutation(async ({ ctx, input }) => {
    const seller = await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const exchange = await requestPayUrl(ctx.config, seller.slug, { method: input.method ?? 'GET', path: input.path ?? '/' });
    return { answer: { ...exchange, paymentRequired: paymentRequiredOf(exchange) } };
  });
