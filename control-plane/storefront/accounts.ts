import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { accessId, account } from '../../shared/schemas/accounts.js';
import { sellerId } from '../../shared/schemas/sellers.js';
import { ownedSeller } from '../catalog/guards.js';
import type { Db } from '../db/client.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure, catalogWriteProcedure } from '../trpc/procedures.js';
import { cancelAccount } from './account-changes.js';
import { accountViews } from './account-view.js';

/**
 * Sellers' accounts through the management API: list a seller's, read one, cancel one.
 * Cancelling ends the period at once (a plan without a period gets one ending now), leaves what
 * credit remains undrawn, raises `stateVersion` and, for a stateful seller, leaves the account
 * write that says so. A later renewal or top-up by the buyer makes the account active again.
 */

async function ownedAccount(db: Db, organizationId: string, id: string) {
  const row = await db.access.findUnique({ where: { id }, select: { sellerId: true, seller: { select: { organizationId: true } } } });
  if (!row || row.seller.organizationId !== organizationId) throw new ApiError('access_not_found', 'No such account.');
  return row;
}

export const listAccounts = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/accounts', tags: ['Accounts'], summary: "List a seller's buyer accounts" },
    errors: ['seller_not_found'],
  })
  .input(z.object({ sellerId }))
  .output(z.object({ accounts: z.array(account) }))
  .query(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    return { accounts: (await accountViews(ctx.db, input.sellerId)) as z.infer<typeof account>[] };
  });

export const getAccount = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/accounts/{accessId}', tags: ['Accounts'], summary: 'Read a buyer account' },
    errors: ['access_not_found'],
  })
  .input(z.object({ accessId }))
  .output(z.object({ account }))
  .query(async ({ ctx, input }) => {
    const { sellerId } = await ownedAccount(ctx.db, ctx.actor.organizationId, input.accessId);
    const [view] = await accountViews(ctx.db, sellerId, { id: input.accessId });
    return { account: view as z.infer<typeof account> };
  });

export const cancelAccountRoute = catalogWriteProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/accounts/{accessId}/cancel', tags: ['Accounts'], summary: 'Cancel a buyer account now' },
    errors: ['access_not_found'],
  })
  .input(z.object({ accessId }))
  .output(z.object({ account }))
  .mutation(async ({ ctx, input }) => {
    const { sellerId } = await ownedAccount(ctx.db, ctx.actor.organizationId, input.accessId);
    await ctx.db.$transaction((tx) => cancelAccount(tx, input.accessId, new Date()));
    ctx.accountWrites?.wake();
    const [view] = await accountViews(ctx.db, sellerId, { id: input.accessId });
    return { account: view as z.infer<typeof account> };
  });

export const accountsRouter = router({ list: listAccounts, get: getAccount, cancel: cancelAccountRoute });
