import { router } from '../../trpc/init.js';
import { createService } from './create.js';
import { deleteService } from './delete.js';
import { getService } from './get.js';
import { listServices } from './list.js';
import { updateService } from './update.js';

export const servicesRouter = router({
  create: createService,
  get: getService,
  list: listServices,
  update: updateService,
  delete: deleteService,
});
