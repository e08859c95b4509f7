import { router } from '../../trpc/init.js';
import { getMe } from './me.js';
import { signIn } from './sign-in.js';
import { signOut } from './sign-out.js';

export const sessionRouter = router({ signIn, signOut, me: getMe });
