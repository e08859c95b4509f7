import { z } from 'zod';
import { apiKey } from '../../../shared/schemas/api-keys.js';
import { memberProcedure } from '../../trpc/procedures.js';
import { toApiKeyWire } from './wire.js';

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
