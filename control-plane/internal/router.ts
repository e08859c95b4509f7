import { z } from 'zod';
import { sellerByHost } from '../catalog/seller-by-host.js';
import { databaseIsReachable } from '../db/client.js';
import { internalProcedure, router } from '../trpc/init.js';
import { agentByTokenHash, completeRegistration, createRegistrationChallenge } from './agents.js';
import { captureUsage, capturedUsageSchema } from './captured-usage.js';
import { sellerManifest } from './manifest.js';
import {
  MAX_TALLIES_PER_BATCH,
  recordRequests,
  requestCompletionSchema,
  requestRecordSchema,
  requestTallySchema,
} from './request-records.js';
import { sellersChangedSince } from './sellers-changed.js';
import { ApiError } from '../../shared/errors.js';
import { createChallenge } from '../payments/challenge.js';
import { claimPaidRequest } from '../payments/claim.js';
import { settlePaidRequest } from '../payments/settle.js';
import { challengeInputSchema, claimInputSchema, settleInputSchema } from './payments.js';

/** The API the proxy calls over tRPC. Every procedure needs the internal token. */
export const internalRouter = router({
  ping: internalProcedure.query(async ({ ctx }) => ({ ok: true, database: await databaseIsReachable(ctx.db) })),

  sellerByHost: internalProcedure
    .input(z.object({ host: z.string().min(1).max(300) }))
    .query(({ ctx, input }) => sellerByHost(ctx.db, ctx.masterKey, ctx.config.payDomain, input.host)),

  sellersChangedSince: internalProcedure
    .input(z.object({ since: z.iso.datetime().nullable() }))
    .query(({ ctx, input }) => sellersChangedSince(ctx.db, input.since)),

  manifest: internalProcedure
    .input(z.object({ sellerId: z.string().max(64) }))
    .query(({ ctx, input }) => sellerManifest(ctx.db, input.sellerId)),

  agentByTokenHash: internalProcedure
    .input(z.object({ tokenHash: z.string().regex(/^[0-9a-f]{64}$/) }))
    .query(({ ctx, input }) => agentByTokenHash(ctx.db, input.tokenHash)),

  agentChallenge: internalProcedure
    .input(z.object({ walletAddress: z.string().max(100), sellerSlug: z.string().max(100) }))
    .mutation(({ ctx, input }) => createRegistrationChallenge(ctx.db, input)),

  agentRegister: internalProcedure
    .input(z.object({ challengeId: z.string().max(64), signature: z.string().max(200) }))
    .mutation(({ ctx, input }) => completeRegistration(ctx.db, input)),

  recordRequests: internalProcedure
    .input(
      z.object({
        created: z.array(requestRecordSchema).max(1_000),
        completed: z.array(requestCompletionSchema).max(1_000),
        tallies: z.array(requestTallySchema).max(MAX_TALLIES_PER_BATCH).default([]),
      }),
    )
    .mutation(({ ctx, input }) => recordRequests(ctx.db, input, ctx.provider)),

  captureUsage: internalProcedure.input(capturedUsageSchema).mutation(({ ctx, input }) => captureUsage(ctx.db, input)),

  /** A seller's 402 turned into a priced challenge; failures come back as `{ ok: false, envelope }`. */
  createChallenge: internalProcedure.input(challengeInputSchema).mutation(({ ctx, input }) =>
    createChallenge(ctx.db, ctx.payments, input).then(
      (challenge) => ({ ok: true as const, challenge }),
      (err) => {
        if (err instanceof ApiError) return { ok: false as const, status: err.status, envelope: err.toBody() };
        throw err;
      },
    ),
  ),

  claimPaidRequest: internalProcedure.input(claimInputSchema).mutation(({ ctx, input }) => claimPaidRequest(ctx.db, ctx.payments, input)),

  settlePaidRequest: internalProcedure
    .input(settleInputSchema)
    .mutation(({ ctx, input }) => settlePaidRequest(ctx.db, ctx.payments, input)),
});
