import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { idSchema, timestamp } from '../../shared/schemas/fields.js';
import { sellerId } from '../../shared/schemas/sellers.js';
import { ownedSeller } from '../catalog/guards.js';
import type { Db } from '../db/client.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure, catalogWriteProcedure } from '../trpc/procedures.js';

/**
 * Sellers see and steer the delivery of their account writes: each write's status, attempts,
 * next attempt, last error and reply; and a failed one re-sent now. Re-sending is the seller's
 * decision to take the account after all: the write goes out as it stood, with fresh attempts,
 * and a payment released when it failed stays released.
 */
const accountWriteId = idSchema('accountWrite');

const accountWrite = z
  .object({
    id: accountWriteId,
    accessId: z.string(),
    stateVersion: z.int(),
    status: z.enum(['pending', 'delivering', 'applied', 'failed', 'superseded']),
    attempts: z.int(),
    nextAttemptAt: timestamp.nullable().meta({ description: 'When it is tried next; null once it is settled one way or the other' }),
    lastError: z.string().nullable(),
    lastHttpStatus: z.int().nullable(),
    lastReply: z.string().nullable().meta({ description: "The seller's last reply body, cut to 500 characters" }),
    firstTriedAt: timestamp.nullable(),
    deliveredAt: timestamp.nullable(),
    createdAt: timestamp,
  })
  .meta({ id: 'AccountWrite' });

type Row = Awaited<ReturnType<Db['accountWrite']['findUniqueOrThrow']>>;

function toWire(row: Row): z.infer<typeof accountWrite> {
  const open = row.status === 'pending' || row.status === 'delivering';
  return {
    id: row.id,
    accessId: row.accessId,
    stateVersion: row.stateVersion,
    status: row.status as z.infer<typeof accountWrite>['status'],
    attempts: row.attempts,
    nextAttemptAt: open ? row.nextAttemptAt.toISOString() : null,
    lastError: row.lastError,
    lastHttpStatus: row.lastHttpStatus,
    lastReply: row.lastReply,
    firstTriedAt: row.firstTriedAt?.toISOString() ?? null,
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

export const listAccountWrites = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/account-writes',
      tags: ['Accounts'],
      summary: "A seller's account writes and their delivery, newest first",
    },
    errors: ['seller_not_found'],
  })
  .input(z.object({ sellerId }))
  .output(z.object({ accountWrites: z.array(accountWrite) }))
  .query(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const rows = await ctx.db.accountWrite.findMany({
      where: { kind: 'write', access: { sellerId: input.sellerId } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    return { accountWrites: rows.map(toWire) };
  });

export const resendAccountWrite = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/account-writes/{accountWriteId}/resend',
      tags: ['Accounts'],
      summary: 'Re-send a failed account write now',
    },
    errors: ['account_write_not_found', 'account_write_not_failed'],
  })
  .input(z.object({ accountWriteId }))
  .output(z.object({ accountWrite }))
  .mutation(async ({ ctx, input }) => {
    const row = await ctx.db.accountWrite.findUnique({
      where: { id: input.accountWriteId },
      include: { access: { select: { seller: { select: { organizationId: true } } } } },
    });
    if (!row || row.access.seller.organizationId !== ctx.actor.organizationId) throw new ApiError('account_write_not_found');
    const requeued = await ctx.db.accountWrite.updateMany({
      where: { id: row.id, status: 'failed' },
      data: { status: 'pending', attempts: 0, firstTriedAt: null, nextAttemptAt: new Date(), lastError: null, claimedUntil: null },
    });
    if (requeued.count !== 1) throw new ApiError('account_write_not_failed', `This write is ${row.status}.`);
    ctx.accountWrites?.wake();
    return { accountWrite: toWire(await ctx.db.accountWrite.findUniqueOrThrow({ where: { id: row.id } })) };
  });

export const accountWritesRouter = router({ list: listAccountWrites, resend: resendAccountWrite });
