import { router } from '../../trpc/init.js';
import { createPlanMeterPrice } from './create.js';
import { deletePlanMeterPrice } from './delete.js';
import { getPlanMeterPrice } from './get.js';
import { listPlanMeterPrices } from './list.js';
import { updatePlanMeterPrice } from './update.js';

export const planMeterPricesRouter = router({
  create: createPlanMeterPrice,
  get: getPlanMeterPrice,
  list: listPlanMeterPrices,
  update: updatePlanMeterPrice,
  delete: deletePlanMeterPrice,
});
