import { router } from '../../trpc/init.js';
import { addMember } from './add.js';
import { listMembers } from './list.js';
import { removeMember } from './remove.js';
import { updateMember } from './update.js';

export const membersRouter = router({ list: listMembers, add: addMember, update: updateMember, remove: removeMember });
