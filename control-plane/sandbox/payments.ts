import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { idSchema } from '../../shared/schemas/fields.js';
import { catalogWriteProcedure } from '../trpc/procedures.js';
import { refuseLive } from './sandbox-seller.js';

/**
 * `POST /v1/sandbox/payments/{paymentId}/refund`: reserved (docs/decisions.md#D-232). A settled
 * crypto payment has no refund in hub, and card refunds and disputes are another issue; the one
 * return hub makes, of a payment held for a stateful seller, follows a write the seller refuses,
 * which a sandbox seller triggers from its own account endpoint. Never a faked success.
 */
export const sandboxRefundRoute = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/sandbox/payments/{paymentId}/refund',
      tags: ['Sandbox'],
      summary: 'Refund a sandbox payment (reserved)',
    },
    errors: ['payment_not_found', 'seller_not_in_sandbox', 'refund_not_available'],
  })
  .input(z.strictObject({ paymentId: idSchema('paymentAttempt') }))
  .output(z.void())
  .mutation(async ({ ctx, input }) => {
    const payment = await ctx.db.paymentAttempt.findUnique({
      where: { id: input.paymentId },
      select: { seller: { select: { organizationId: true, sandbox: true, slug: true } } },
    });
    if (!payment || payment.seller.organizationId !== ctx.actor.organizationId) throw new ApiError('payment_not_found');
    refuseLive(payment.seller);
    throw new ApiError(
      'refund_not_available',
      'hub does not take back a settled payment on request (a card payment is refunded through the card provider only when its account write fails for good). A payment held for a stateful seller goes back when the seller refuses the account write: answer it with a 4xx from your account endpoint.',
    );
  });
