import { z } from 'zod';
import { idSchema, usdInput, usdOutput } from '../../shared/schemas/fields.js';
import { router } from '../trpc/init.js';
import { catalogWriteProcedure } from '../trpc/procedures.js';
import { disputePayment, refundPayment } from './reversals.js';

/**
 * `POST /v1/sandbox/payments/{paymentId}/refund` and `…/dispute`: a sandbox payment reversed as
 * a card provider would reverse it, so the seller sees the account writes a refund or a lost
 * chargeback sends (docs/decisions.md#D-300).
 */
const reversedPayment = z
  .object({
    paymentId: z.string(),
    accessId: z.string().meta({ description: 'The account the payment bought or topped up' }),
    amountUsd: usdOutput,
    refundedUsd: usdOutput.meta({ description: 'Refunded so far, in all' }),
    disputeStatus: z.enum(['open', 'won', 'lost']).nullable(),
    disputeLostUsd: usdOutput,
    creditReversedUsd: usdOutput.meta({ description: "The account's cumulative creditReversedUsd after this change" }),
  })
  .meta({ id: 'SandboxReversedPayment' });

const errors = ['payment_not_found', 'seller_not_in_sandbox', 'refund_not_available'] as const;

const refundRoute = catalogWriteProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/sandbox/payments/{paymentId}/refund', tags: ['Sandbox'], summary: 'Refund a sandbox payment' },
    errors: [...errors],
  })
  .input(
    z.strictObject({
      paymentId: idSchema('paymentAttempt'),
      amountUsd: usdInput.optional().meta({ description: 'How much to refund; all that is left when absent' }),
    }),
  )
  .output(z.object({ payment: reversedPayment }))
  .mutation(async ({ ctx, input }) => {
    const payment = await refundPayment(ctx.db, ctx.actor.organizationId, input.paymentId, input.amountUsd);
    ctx.accountWrites?.wake();
    return { payment };
  });

const disputeRoute = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/sandbox/payments/{paymentId}/dispute',
      tags: ['Sandbox'],
      summary: 'Open, win or lose a dispute of a sandbox payment',
    },
    errors: [...errors],
  })
  .input(
    z.strictObject({
      paymentId: idSchema('paymentAttempt'),
      status: z.enum(['open', 'won', 'lost']).meta({ description: 'open first, then won or lost' }),
    }),
  )
  .output(z.object({ payment: reversedPayment }))
  .mutation(async ({ ctx, input }) => {
    const payment = await disputePayment(ctx.db, ctx.actor.organizationId, input.paymentId, input.status);
    ctx.accountWrites?.wake();
    return { payment };
  });

export const sandboxPaymentsRouter = router({ refund: refundRoute, dispute: disputeRoute });
