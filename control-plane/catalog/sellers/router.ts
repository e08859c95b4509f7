import { router } from '../../trpc/init.js';
import { createSeller } from './create.js';
import { deleteSeller } from './delete.js';
import { getSeller } from './get.js';
import { listSellers } from './list.js';
import { getStatefulAccess, putStatefulAccess } from './stateful-access.js';
import { updateSeller } from './update.js';

export const sellersRouter = router({
  create: createSeller,
  get: getSeller,
  list: listSellers,
  update: updateSeller,
  delete: deleteSeller,
  getStatefulAccess,
  putStatefulAccess,
});
