import { z } from 'zod';
import { isId } from '../../shared/ids.js';
import { describe, type ParseResult } from './parse-result.js';

/**
 * The key mint body (spec: Key mint body and result): `{ agent }`, or in the later variant
 * `{ agentId, buyerId, buyerEmail }`. The account comes from the path, never the body.
 */
export type MintRequest = { variant: 'original' | 'later'; agentId: string; buyerId: string | null; buyerEmail: string | null };

const agentId = z.string().refine((v) => isId('agent', v), 'must be an agent id (agt_…)');
const original = z.object({ agent: agentId });
const later = z.object({
  agentId,
  buyerId: z
    .string()
    .refine((v) => isId('buyer', v), 'must be a buyer id (byr_…)')
    .nullish(),
  buyerEmail: z.string().min(3).nullish(),
});

export function parseMintRequest(body: unknown): ParseResult<MintRequest> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { ok: false, message: 'the key mint body must be a JSON object' };
  const hasOriginal = Object.hasOwn(body, 'agent');
  if (hasOriginal === Object.hasOwn(body, 'agentId'))
    return { ok: false, message: 'the key mint body must name its agent in exactly one of agent or agentId' };
  if (hasOriginal) {
    const parsed = original.safeParse(body);
    return parsed.success
      ? { ok: true, value: { variant: 'original', agentId: parsed.data.agent, buyerId: null, buyerEmail: null } }
      : { ok: false, message: describe(parsed.error) };
  }
  const parsed = later.safeParse(body);
  if (!parsed.success) return { ok: false, message: describe(parsed.error) };
  return {
    ok: true,
    value: {
      variant: 'later',
      agentId: parsed.data.agentId,
      buyerId: parsed.data.buyerId ?? null,
      buyerEmail: parsed.data.buyerEmail ?? null,
    },
  };
}
