import { bearerToken } from '../shared/bearer.js';
import type { AgentIdentity } from '../shared/contract.js';
import { ExpiringCache } from '../shared/expiring-cache.js';
import { hashToken, tokenPrefixes } from '../shared/tokens.js';
import type { ControlPlaneClient } from './control-plane-client.js';

export type AgentCaller = { kind: 'agent' } & AgentIdentity;
export type Caller = { kind: 'anonymous' } | AgentCaller | { kind: 'unknown_token' };

/** The caller without an agent token (one shared value: anonymous calls allocate nothing). */
export const ANONYMOUS: Caller = Object.freeze({ kind: 'anonymous' });

/** The hub agent token an Authorization header carries (it never reaches the seller), if any. */
export function agentToken(authorization: string | undefined): string | undefined {
  const token = bearerToken(authorization);
  return token?.startsWith(tokenPrefixes.agent) ? token : undefined;
}

/**
 * Who is calling: an agent presenting its hub token, or an anonymous caller. Lookups are cached
 * by token hash for a short time (bounded in size) so identified traffic does not cost a
 * control-plane call per request; a token revoked by re-registration stops working within the TTL.
 */
export class AgentDirectory {
  private readonly cache: ExpiringCache<string, AgentCaller | null>;

  constructor(
    private readonly controlPlane: ControlPlaneClient,
    private readonly options = { ttlMs: 30_000, unknownTtlMs: 5_000, maxEntries: 50_000 },
  ) {
    this.cache = new ExpiringCache({ ttlMs: options.ttlMs, maxEntries: options.maxEntries });
  }

  async identify(authorization: string | undefined): Promise<Caller> {
    const token = agentToken(authorization);
    if (token === undefined) return ANONYMOUS;
    const tokenHash = hashToken(token);
    let caller = this.cache.get(tokenHash);
    if (caller === undefined) {
      const found = await this.controlPlane.call('agentByTokenHash', { tokenHash });
      caller = found ? { kind: 'agent', ...found } : null;
      this.cache.set(tokenHash, caller, caller ? this.options.ttlMs : this.options.unknownTtlMs);
    }
    return caller ?? { kind: 'unknown_token' };
  }

  size(): number {
    return this.cache.size;
  }
}
