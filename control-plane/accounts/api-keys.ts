import { z } from 'zod';
import type { ApiKey } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { apiKey, apiKeyId, createApiKeyInput, createdApiKey } from '../../shared/schemas/api-keys.js';
import { createApiKey, parseScopes } from '../auth/credentials.js';
import { router } from '../trpc/init.js';
import { adminProcedure, memberProcedure } from '../trpc/procedures.js';

export function toApiKeyWire(row: ApiKey): z.infer<typeof apiKey> {
  return {
    id: row.id,
    name: row.name,
    keyPrefix: row.keyPrefix,
    scopes: parseScopes(row.scopesJson),
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
  };
}

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

/** The organization's active keys (revoked ones are gone from the list). */
export const listApiKeys = memberProcedure
  .meta({ openapi: { method: 'GET', path: '/v1/api-keys', tags: ['API keys'], summary: "The organization's active API keys" } })
  .input(z.object({}))
  .output(z.object({ apiKeys: z.array(apiKey) }))
  .query(async ({ ctx }) => {
    const rows = await ctx.db.apiKey.findMany({
      where: { organizationId: ctx.member.organizationId, revokedAt: null },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return { apiKeys: rows.map(toApiKeyWire) };
  });

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

export const apiKeysRouter = router({ list: listApiKeys, create: createApiKeyProcedure, revoke: revokeApiKey });
