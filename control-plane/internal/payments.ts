import { z } from 'zod';
import { paymentPayloadSchema } from '../../shared/payments/x402-wire.js';

/** Inputs of the payment procedures the proxy calls (router.ts wires them). */
export const challengeInputSchema = z.object({
  sellerId: z.string().max(64),
  requestId: z.string().startsWith('hubreq_').max(64),
  agentId: z.string().max(64).nullable(),
  buyerId: z.string().max(64).nullable(),
  method: z.string().max(16),
  pathAndQuery: z.string().max(8192),
  bodyDigest: z.string().regex(/^[0-9a-f]{64}$/),
  serviceSlug: z.string().min(1).max(200),
  planSlug: z.string().max(200).optional(),
  usage: z
    .array(z.object({ meterSlug: z.string().min(1).max(200), quantity: z.number().int().min(0).max(2_147_483_647).optional() }))
    .max(100),
  sandbox: z.boolean(),
});

export const claimInputSchema = z.object({
  paymentId: z.string().startsWith('apay_').max(64),
  method: z.string().max(16),
  pathAndQuery: z.string().max(8192),
  bodyDigest: z.string().regex(/^[0-9a-f]{64}$/),
  protocol: z.enum(['x402', 'mpp']),
  payload: paymentPayloadSchema,
});

export const settleInputSchema = z.object({
  paymentId: z.string().startsWith('apay_').max(64),
  upstreamStatus: z.number().int().min(100).max(599),
});
