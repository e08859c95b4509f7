import { z } from 'zod';
import type { SigningSecret } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { sellerId } from '../../shared/schemas/sellers.js';
import { createdSigningSecret, signingSecret, signingSecretId } from '../../shared/schemas/signing-secrets.js';
import { sealSecret } from '../../shared/secret-box.js';
import { newToken } from '../../shared/tokens.js';
import type { Db } from '../db/client.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure, catalogWriteProcedure } from '../trpc/procedures.js';
import { changeCatalog, ownedSeller } from './guards.js';

/** Newest first: the order in which hub picks the secret it signs with. */
export const newestFirst = [{ createdAt: 'desc' }, { id: 'desc' }] as const;

/** `signingId` is the id of the secret hub signs with (the newest active one), if any. */
export function toSigningSecretWire(row: SigningSecret, signingId: string | undefined): z.infer<typeof signingSecret> {
  return {
    id: row.id,
    sellerId: row.sellerId,
    status: row.status as 'active' | 'retired',
    signing: row.id === signingId,
    createdAt: row.createdAt.toISOString(),
    retiredAt: row.retiredAt ? row.retiredAt.toISOString() : null,
  };
}

/**
 * Adds a secret beside the active ones; it signs from now on, and the older ones stay active
 * until retired, so a seller's verifier may accept both during a hand-over.
 */
export const createSigningSecret = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/sellers/{sellerId}/signing-secrets',
      tags: ['Signing secrets'],
      summary: 'Create a signing secret (value shown once)',
    },
    successStatus: 201,
    errors: ['seller_not_found'],
  })
  .input(z.strictObject({ sellerId }))
  .output(createdSigningSecret)
  .mutation(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    return issueSigningSecret(ctx.db, ctx.masterKey, input.sellerId, { retireOthers: false });
  });

export const getSigningSecret = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/sellers/{sellerId}/signing-secrets/{signingSecretId}',
      tags: ['Signing secrets'],
      summary: 'Read a signing secret (never its value)',
    },
    errors: ['seller_not_found', 'signing_secret_not_found'],
  })
  .input(z.object({ sellerId, signingSecretId }))
  .output(z.object({ signingSecret }))
  .query(async ({ ctx, input }) => {
    const row = await ownedSigningSecret(ctx.db, ctx.actor.organizationId, input.sellerId, input.signingSecretId);
    return { signingSecret: toSigningSecretWire(row, await signingSecretIdOf(ctx.db, input.sellerId)) };
  });

/**
 * Makes a new active signing secret for a seller, optionally retiring every other active one in
 * the same transaction (a rotation). The value is sealed under the master key at rest and
 * returned here once; being the newest active secret, it is the one hub signs with now.
 */
export async function issueSigningSecret(
  db: Db,
  masterKey: Buffer,
  sellerId: string,
  options: { retireOthers: boolean },
): Promise<z.infer<typeof createdSigningSecret>> {
  const secret = newToken('signingSecret');
  const row = await changeCatalog(db, sellerId, async (tx) => {
    if (options.retireOthers) {
      await tx.signingSecret.updateMany({ where: { sellerId, status: 'active' }, data: { status: 'retired', retiredAt: new Date() } });
    }
    return tx.signingSecret.create({
      data: { id: newId('signingSecret'), sellerId, encryptedSecret: sealSecret(masterKey, secret), status: 'active' },
    });
  });
  return { signingSecret: toSigningSecretWire(row, row.id), secret };
}

/** Every secret of the seller, active and retired, newest first. Values are never shown again. */
export const listSigningSecrets = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/sellers/{sellerId}/signing-secrets',
      tags: ['Signing secrets'],
      summary: "List a seller's signing secrets",
    },
    errors: ['seller_not_found'],
  })
  .input(z.object({ sellerId }))
  .output(z.object({ signingSecrets: z.array(signingSecret) }))
  .query(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const rows = await ctx.db.signingSecret.findMany({ where: { sellerId: input.sellerId }, orderBy: [...newestFirst] });
    const signingId = rows.find((row) => row.status === 'active')?.id;
    return { signingSecrets: rows.map((row) => toSigningSecretWire(row, signingId)) };
  });

/** A signing secret of a seller of the organization, or `seller_not_found` / `signing_secret_not_found`. */
export async function ownedSigningSecret(db: Db, organizationId: string, sellerId: string, secretId: string) {
  await ownedSeller(db, organizationId, sellerId);
  const secret = await db.signingSecret.findFirst({ where: { id: secretId, sellerId } });
  if (!secret) throw new ApiError('signing_secret_not_found');
  return secret;
}

/**
 * Retires a secret: hub stops signing with it, and the next newest active one (if any) signs.
 * Retiring a retired secret changes nothing. Retiring the last active one leaves the seller
 * without a secret, and its pay URL answers `signing_secret_required` until it has one again.
 */
export const retireSigningSecret = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/sellers/{sellerId}/signing-secrets/{signingSecretId}/retire',
      tags: ['Signing secrets'],
      summary: 'Retire a signing secret',
    },
    errors: ['seller_not_found', 'signing_secret_not_found'],
  })
  .input(z.strictObject({ sellerId, signingSecretId }))
  .output(z.object({ signingSecret }))
  .mutation(async ({ ctx, input }) => {
    const existing = await ownedSigningSecret(ctx.db, ctx.actor.organizationId, input.sellerId, input.signingSecretId);
    const { row, signingId } = await changeCatalog(ctx.db, input.sellerId, async (tx) => {
      const row =
        existing.status === 'retired'
          ? existing
          : await tx.signingSecret.update({ where: { id: existing.id }, data: { status: 'retired', retiredAt: new Date() } });
      return { row, signingId: await signingSecretIdOf(tx, input.sellerId) };
    });
    return { signingSecret: toSigningSecretWire(row, signingId) };
  });

/** Replaces the seller's secrets in one step: a new one signs, every other active one retires. */
export const rotateSigningSecrets = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/sellers/{sellerId}/signing-secrets/rotate',
      tags: ['Signing secrets'],
      summary: 'Rotate: create a new signing secret and retire all others',
    },
    successStatus: 201,
    errors: ['seller_not_found'],
  })
  .input(z.strictObject({ sellerId }))
  .output(createdSigningSecret)
  .mutation(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    return issueSigningSecret(ctx.db, ctx.masterKey, input.sellerId, { retireOthers: true });
  });

/** The id of the secret hub signs a seller's traffic with: its newest active one. */
export async function signingSecretIdOf(db: Pick<Db, 'signingSecret'>, sellerId: string): Promise<string | undefined> {
  const newest = await db.signingSecret.findFirst({
    where: { sellerId, status: 'active' },
    orderBy: [...newestFirst],
    select: { id: true },
  });
  return newest?.id;
}

export const signingSecretsRouter = router({
  create: createSigningSecret,
  list: listSigningSecrets,
  get: getSigningSecret,
  rotate: rotateSigningSecrets,
  retire: retireSigningSecret,
});
