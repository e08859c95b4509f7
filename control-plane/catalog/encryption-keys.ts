import { generateKeyPairSync } from 'node:crypto';
import { z } from 'zod';
import type { EncryptionKey } from '../../generated/prisma/sqlite/client.js';
import { type PublicEncryptionJwk, publicEncryptionJwk } from '../../shared/encryption/suite.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { encryptionKey, encryptionKeyId } from '../../shared/schemas/encryption-keys.js';
import { sellerId } from '../../shared/schemas/sellers.js';
import { sealSecret } from '../../shared/secret-box.js';
import type { Db } from '../db/client.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure, catalogWriteProcedure } from '../trpc/procedures.js';
import { changeCatalog, ownedSeller } from './guards.js';
import { newestFirst } from './signing-secrets.js';

/**
 * A seller's keys for end-to-end encrypted requests. hub makes each key pair itself: the private
 * half is sealed under the master key at once and never leaves hub again (only the proxy opens it,
 * to decrypt); the public half is what the pay URL's JWKS publishes while the key is active.
 */

export function toEncryptionKeyWire(row: EncryptionKey): z.infer<typeof encryptionKey> {
  return {
    id: row.id,
    sellerId: row.sellerId,
    status: row.status as 'active' | 'retired',
    publicJwk: JSON.parse(row.publicJwk) as PublicEncryptionJwk,
    createdAt: row.createdAt.toISOString(),
    retiredAt: row.retiredAt ? row.retiredAt.toISOString() : null,
  };
}

/** A fresh P-256 key pair: the public JWK to publish, the private scalar to seal. */
function newKeyPair(kid: string): { publicJwk: PublicEncryptionJwk; d: string } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  return { publicJwk: publicEncryptionJwk(kid, jwk.x!, jwk.y!), d: jwk.d! };
}

export const createEncryptionKey = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/sellers/{sellerId}/encryption-keys',
      tags: ['Encryption keys'],
      summary: 'Create an encryption key (published in the JWKS at once; the private key is never shown)',
    },
    successStatus: 201,
    errors: ['seller_not_found'],
  })
  .input(z.strictObject({ sellerId }))
  .output(z.object({ encryptionKey }))
  .mutation(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const id = newId('encryptionKey');
    const { publicJwk, d } = newKeyPair(id);
    const row = await changeCatalog(ctx.db, input.sellerId, (tx) =>
      tx.encryptionKey.create({
        data: {
          id,
          sellerId: input.sellerId,
          publicJwk: JSON.stringify(publicJwk),
          encryptedPrivateKey: sealSecret(ctx.masterKey, d),
          status: 'active',
        },
      }),
    );
    return { encryptionKey: toEncryptionKeyWire(row) };
  });

/** Every key of the seller, active and retired, newest first. */
export const listEncryptionKeys = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/sellers/{sellerId}/encryption-keys',
      tags: ['Encryption keys'],
      summary: "List a seller's encryption keys",
    },
    errors: ['seller_not_found'],
  })
  .input(z.object({ sellerId }))
  .output(z.object({ encryptionKeys: z.array(encryptionKey) }))
  .query(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const rows = await ctx.db.encryptionKey.findMany({ where: { sellerId: input.sellerId }, orderBy: [...newestFirst] });
    return { encryptionKeys: rows.map(toEncryptionKeyWire) };
  });

export const getEncryptionKey = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/sellers/{sellerId}/encryption-keys/{encryptionKeyId}',
      tags: ['Encryption keys'],
      summary: 'Read an encryption key (its public half)',
    },
    errors: ['seller_not_found', 'encryption_key_not_found'],
  })
  .input(z.object({ sellerId, encryptionKeyId }))
  .output(z.object({ encryptionKey }))
  .query(async ({ ctx, input }) => {
    const row = await ownedEncryptionKey(ctx.db, ctx.actor.organizationId, input.sellerId, input.encryptionKeyId);
    return { encryptionKey: toEncryptionKeyWire(row) };
  });

/**
 * Retires a key: it leaves the JWKS, and a request encrypted to it is refused (`unknown_jwe_kid`,
 * before any payment) once the proxy has seen the change. Retiring a retired key changes nothing;
 * a retired key never comes back (make a new one).
 */
export const retireEncryptionKey = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/sellers/{sellerId}/encryption-keys/{encryptionKeyId}/retire',
      tags: ['Encryption keys'],
      summary: 'Retire an encryption key',
    },
    errors: ['seller_not_found', 'encryption_key_not_found'],
  })
  .input(z.strictObject({ sellerId, encryptionKeyId }))
  .output(z.object({ encryptionKey }))
  .mutation(async ({ ctx, input }) => {
    const existing = await ownedEncryptionKey(ctx.db, ctx.actor.organizationId, input.sellerId, input.encryptionKeyId);
    if (existing.status === 'retired') return { encryptionKey: toEncryptionKeyWire(existing) };
    const row = await changeCatalog(ctx.db, input.sellerId, (tx) =>
      tx.encryptionKey.update({ where: { id: existing.id }, data: { status: 'retired', retiredAt: new Date() } }),
    );
    return { encryptionKey: toEncryptionKeyWire(row) };
  });

async function ownedEncryptionKey(db: Db, organizationId: string, sellerId: string, keyId: string) {
  await ownedSeller(db, organizationId, sellerId);
  const key = await db.encryptionKey.findFirst({ where: { id: keyId, sellerId } });
  if (!key) throw new ApiError('encryption_key_not_found');
  return key;
}

export const encryptionKeysRouter = router({
  create: createEncryptionKey,
  list: listEncryptionKeys,
  get: getEncryptionKey,
  retire: retireEncryptionKey,
});
