import { hashToken, tokenPrefixes } from '../shared/tokens.js';
import type { ControlPlaneClient } from './control-plane-client.js';

export type AgentCaller = { kind: 'agent'; agentId: string; buyerId: string | null; claimed: boolean };
export type Caller = { kind: 'anonymous' } | AgentCaller | { kind: 'unknown_token' };

const BEARER_PREFIX = `Bearer ${tokenPrefixes.agent}`;

/** The caller without an agent token (one shared value: anonymous calls allocate nothing). */
export const ANONYMOUS: Caller = Object.freeze({ kind: 'anonymous' });

/** True when an Authorization header carries a hub agent token (which never reaches the seller). */
export function carriesAgentToken(authorization: string | undefined): authorization is string {
  return typeof authorization === 'string' && authorization.startsWith(BEARER_PREFIX);
}

/**
 * Who is calling: an agent presenting its hub token, or an anonymous caller. Lookups are cached
 * by token hash for a short time (bounded in size) so identified traffic does not cost a
 * control-plane call per request; a token revoked by re-registration stops working within the TTL.
 */
export class AgentDirectory {
  private readonly cache = new Map<string, { value: AgentCaller | null; expiresAt: number }>();

  constructor(
    private readonly controlPlane: ControlPlaneClient,
    private readonly options = { ttlMs: 30_000, unknownTtlMs: 5_000, maxEntries: 50_000 },
  ) {}

  async identify(authorization: string | undefined): Promise<Caller> {
    if (!carriesAgentToken(authorization)) return ANONYMOUS;
    const tokenHash = hashToken(authorization.slice('Bearer '.length).trim());
    const cached = this.cache.get(tokenHash);
    if (cached && cached.expiresAt > Date.now()) return cached.value ?? { kind: 'unknown_token' };

    const found = await this.controlPlane.internal.agentByTokenHash.query({ tokenHash });
    const value: AgentCaller | null = found ? { kind: 'agent', ...found } : null;
    if (this.cache.size >= this.options.maxEntries) this.cache.clear();
    this.cache.set(tokenHash, { value, expiresAt: Date.now() + (value ? this.options.ttlMs : this.options.unknownTtlMs) });
    return value ?? { kind: 'unknown_token' };
  }

  size(): number {
    return this.cache.size;
  }
}
