import { router } from '../../trpc/init.js';
import { createPlan } from './create.js';
import { deletePlan } from './delete.js';
import { getPlan } from './get.js';
import { listPlans } from './list.js';
import { updatePlan } from './update.js';

export const plansRouter = router({ create: createPlan, get: getPlan, list: listPlans, update: updatePlan, delete: deletePlan });
