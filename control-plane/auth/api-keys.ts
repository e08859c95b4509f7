import { newId } from '../../shared/ids.js';
import type { Scope } from '../../shared/scopes.js';
import { hashToken, KEY_PREFIX_LENGTH, newToken } from '../../shared/tokens.js';
import type { Db } from '../db/client.js';

/** Creates an API key; the key itself is returned once and only its hash is kept. */
export async function createApiKey(
  db: Db,
  input: { organizationId: string; name: string; scopes: readonly Scope[]; createdById?: string | null },
) {
  const key = newToken('apiKey');
  const apiKey = await db.apiKey.create({
    data: {
      id: newId('apiKey'),
      organizationId: input.organizationId,
      createdById: input.createdById ?? null,
      name: input.name,
      keyPrefix: key.slice(0, KEY_PREFIX_LENGTH),
      keyHash: hashToken(key),
      scopesJson: JSON.stringify([...new Set(input.scopes)]),
    },
  });
  return { key, apiKey };
}
