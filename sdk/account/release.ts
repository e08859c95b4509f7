import type { HubIdentity } from '../identity.js';
import type { Account } from './account.js';
import type { AccountStore } from './store.js';

/**
 * The accounts a verified request may use (spec: Headers on proxied requests: "The buyer id
 * alone must not unlock records that would not be released to the agent id it arrived with").
 *
 * The agent id is signed; the buyer id is not. So:
 * - no agent id (an anonymous probe): nothing;
 * - the agent's own accounts always;
 * - the buyer's other accounts only when a signed account write or mint already tied this agent to
 *   this buyer. A buyer id that merely arrives next to an agent id unlocks nothing by itself.
 */
export async function accountsFor(store: AccountStore, identity: Pick<HubIdentity, 'agentId' | 'buyerId'>): Promise<Account[]> {
  const { agentId, buyerId } = identity;
  if (agentId === undefined) return [];
  const own = await store.byAgent(agentId);
  if (buyerId === undefined || !(await store.isLinked(agentId, buyerId))) return own;
  const seen = new Set(own.map((a) => a.accessId));
  return [...own, ...(await store.byBuyer(buyerId)).filter((a) => !seen.has(a.accessId))];
}
