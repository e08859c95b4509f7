import { router } from '../../trpc/init.js';
import { membersRouter } from '../members/router.js';
import { getCurrentOrganization, switchOrganization } from './current.js';
import { listOrganizations } from './list.js';

export const organizationsRouter = router({
  list: listOrganizations,
  current: getCurrentOrganization,
  switch: switchOrganization,
  members: membersRouter,
});
