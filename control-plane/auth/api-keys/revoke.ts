import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { apiKeyId } from '../../../shared/schemas/api-keys.js';
import { adminProcedure } from '../../trpc/procedures.js';

/** Revokes a key: it answers `invalid_token` from the next request on. A revoked key is not found. */
export const revokeApiKey = adminProcedure
  .meta({
    openapi: { method: 'DELETE', path: '/v1/api-keys/{apiKeyId}', tags: ['API keys'], summary: 'Revoke an API key (admins only)' },
    successStatus: 204,
    errors: ['api_key_not_found'],
  })
  .input(z.object({ apiKeyId }))
  .output(z.void())
  .mutation(async ({ ctx, input }) => {
    const { count } = await ctx.db.apiKey.updateMany({
      where: { id: input.apiKeyId, organizationId: ctx.member.organizationId, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (count === 0) throw new ApiError('api_key_not_found');
  });
