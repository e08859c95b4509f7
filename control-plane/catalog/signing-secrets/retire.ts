import { z } from 'zod';
import { sellerId } from '../../../shared/schemas/sellers.js';
import { signingSecret, signingSecretId } from '../../../shared/schemas/signing-secrets.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedSigningSecret } from './owned-secret.js';
import { signingSecretIdOf } from './signing-id.js';
import { toSigningSecretWire } from './wire.js';

/**
 * Retires a secret: hub stops signing with it, and the next newest active one (if any) signs.
 * Retiring a retired secret changes nothing. Retiring the last active one leaves the seller
 * without a secret, and its pay URL answers `signing_secret_required` until it has one again.
 */
export const retireSigningSecret = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/sellers/{sellerId}/signing-secrets/{signingSecretId}/retire',
      tags: ['Signing secrets'],
      summary: 'Retire a signing secret',
    },
    errors: ['seller_not_found', 'signing_secret_not_found'],
  })
  .input(z.strictObject({ sellerId, signingSecretId }))
  .output(z.object({ signingSecret }))
  .mutation(async ({ ctx, input }) => {
    const existing = await ownedSigningSecret(ctx.db, ctx.actor.organizationId, input.sellerId, input.signingSecretId);
    const { row, signingId } = await changeCatalog(ctx.db, input.sellerId, async (tx) => {
      const row =
        existing.status === 'retired'
          ? existing
          : await tx.signingSecret.update({ where: { id: existing.id }, data: { status: 'retired', retiredAt: new Date() } });
      return { row, signingId: await signingSecretIdOf(tx, input.sellerId) };
    });
    return { signingSecret: toSigningSecretWire(row, signingId) };
  });
