import { router } from '../../trpc/init.js';
import { createSigningSecret } from './create.js';
import { getSigningSecret } from './get.js';
import { listSigningSecrets } from './list.js';
import { retireSigningSecret } from './retire.js';
import { rotateSigningSecrets } from './rotate.js';

export const signingSecretsRouter = router({
  create: createSigningSecret,
  list: listSigningSecrets,
  get: getSigningSecret,
  rotate: rotateSigningSecrets,
  retire: retireSigningSecret,
});
