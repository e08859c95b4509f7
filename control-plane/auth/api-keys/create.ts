import { createApiKeyInput, createdApiKey } from '../../../shared/schemas/api-keys.js';
import { adminProcedure } from '../../trpc/procedures.js';
import { createApiKey } from '../api-keys.js';
import { toApiKeyWire } from './wire.js';

/**
 * Creates a key of the current organization; the key itself is in this response only. Admins
 * only: a key outlives its creator's membership and acts for the whole organization.
 */
export const createApiKeyProcedure = adminProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/api-keys', tags: ['API keys'], summary: 'Create an API key (shown once; admins only)' },
    successStatus: 201,
  })
  .input(createApiKeyInput)
  .output(createdApiKey)
  .mutation(async ({ ctx, input }) => {
    const { key, apiKey } = await createApiKey(ctx.db, {
      organizationId: ctx.member.organizationId,
      name: input.name,
      scopes: input.scopes,
      createdById: ctx.member.userId,
    });
    return { apiKey: toApiKeyWire(apiKey), key };
  });
