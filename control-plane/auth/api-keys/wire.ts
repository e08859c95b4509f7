import type { z } from 'zod';
import type { ApiKey } from '../../../generated/prisma/sqlite/client.js';
import type { apiKey } from '../../../shared/schemas/api-keys.js';
import { parseScopes } from '../credentials.js';

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
