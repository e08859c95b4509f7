import type { Logger } from 'pino';
import { bearerToken } from '../../shared/bearer.js';
import type { AgentIdentity } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { ExpiringCache } from '../../shared/expiring-cache.js';
import { hashToken, tokenPrefixes } from '../../shared/tokens.js';
import { ChangeFeed, FollowsChanges } from '../change-feed.js';
import type { ControlPlaneClient } from '../control-plane-client.js';

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
 * control-plane call per request. Changes to an agent (its owner, its token) reach the cache
 * within about a second: the directory polls the control-plane for agents changed since its last
 * look and drops them, and `forget` drops one at once where this proxy made the change.
 */
export class AgentDirectory extends FollowsChanges {
  private readonly cache: ExpiringCache<string, AgentCaller | null>;
  protected readonly changes: ChangeFeed;

  constructor(
    private readonly controlPlane: ControlPlaneClient,
    private readonly options = { ttlMs: 30_000, unknownTtlMs: 5_000, maxEntries: 50_000, pollMs: 500 },
    logger?: Logger,
  ) {
    super();
    this.cache = new ExpiringCache({ ttlMs: options.ttlMs, maxEntries: options.maxEntries });
    this.changes = new ChangeFeed(
      async (since) => {
        const { now, agentIds } = await controlPlane.call('agentsChangedSince', { since });
        return { now, ids: agentIds };
      },
      (agentIds) => {
        const changed = new Set(agentIds);
        this.cache.deleteWhere((caller) => caller !== null && changed.has(caller.agentId));
        // A token just issued may sit in the unknown-token cache.
        this.cache.deleteWhere((caller) => caller === null);
      },
      { pollMs: options.pollMs, logger, what: 'agent' },
    );
  }

  /**
   * The caller at `sellerId`'s pay URL. A sandbox test agent is refused at any other seller's
   * (docs/decisions.md#D-301): its calls there would count as live traffic.
   */
  async identify(authorization: string | undefined, sellerId: string): Promise<Caller> {
    const token = agentToken(authorization);
    if (token === undefined) return ANONYMOUS;
    const tokenHash = hashToken(token);
    let caller = this.cache.get(tokenHash);
    if (caller === undefined) {
      const found = await this.controlPlane.call('agentByTokenHash', { tokenHash });
      caller = found ? { kind: 'agent', ...found } : null;
      this.cache.set(tokenHash, caller, caller ? this.options.ttlMs : this.options.unknownTtlMs);
    }
    if (caller?.sandboxSellerId && caller.sandboxSellerId !== sellerId) throw new ApiError('test_agent_not_allowed');
    return caller ?? { kind: 'unknown_token' };
  }

  /** Drops what is cached about an agent (its owner just changed). */
  forget(agentId: string): void {
    this.cache.deleteWhere((caller) => caller?.agentId === agentId);
  }

  size(): number {
    return this.cache.size;
  }
}
