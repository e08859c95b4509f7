import { router } from '../../trpc/init.js';
import { createApiKeyProcedure } from './create.js';
import { listApiKeys } from './list.js';
import { revokeApiKey } from './revoke.js';

export const apiKeysRouter = router({ list: listApiKeys, create: createApiKeyProcedure, revoke: revokeApiKey });
