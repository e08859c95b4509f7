import { router } from '../trpc/init.js';
import { checkUsageProcedure } from './check.js';
import { reportUsageProcedure } from './report.js';

export const usageRouter = router({ check: checkUsageProcedure, report: reportUsageProcedure });
