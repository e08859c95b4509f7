import { router } from '../../trpc/init.js';
import { createMeter } from './create.js';
import { deleteMeter } from './delete.js';
import { getMeter } from './get.js';
import { listMeters } from './list.js';
import { updateMeter } from './update.js';

export const metersRouter = router({ create: createMeter, get: getMeter, list: listMeters, update: updateMeter, delete: deleteMeter });
