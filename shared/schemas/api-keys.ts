import { z } from 'zod';
import { SCOPES } from '../scopes.js';
import { idSchema, name, timestamp } from './fields.js';

/** API keys (spec: Resources › API key (list item)). */

export const apiKeyId = idSchema('apiKey');

export const apiKey = z
  .object({
    id: apiKeyId,
    name: z.string(),
    keyPrefix: z.string().meta({ description: 'The first characters of the key, to tell keys apart' }),
    scopes: z.array(z.enum(SCOPES)),
    createdAt: timestamp,
    lastUsedAt: timestamp.nullable().meta({ description: 'null until first used; refreshed at most once a minute' }),
  })
  .meta({ id: 'ApiKey' });

export const createApiKeyInput = z.strictObject({
  name,
  scopes: z
    .array(z.enum(SCOPES))
    .min(1, 'must name at least one scope')
    .refine((scopes) => new Set(scopes).size === scopes.length, 'must not repeat a scope'),
});

/** A key just made: the key itself is in this response and nowhere else, ever. */
export const createdApiKey = z.object({
  apiKey,
  key: z.string().meta({ description: 'The bearer key (hub_…), shown once' }),
});
