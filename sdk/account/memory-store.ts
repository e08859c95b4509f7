import type { Account } from './account.js';
import type { AccountStore } from './store.js';

/**
 * Accounts in process memory: for tests, demos and single-process sellers that rebuild state from
 * hub's resends. `update` is atomic because `change` is synchronous and JavaScript runs one thing
 * at a time. Accounts are copied in and out, so a caller cannot change a stored one by accident.
 */
export class MemoryAccountStore implements AccountStore {
  readonly #accounts = new Map<string, Account>();
  readonly #links = new Set<string>();

  async get(accessId: string): Promise<Account | undefined> {
    const account = this.#accounts.get(accessId);
    return account && structuredClone(account);
  }

  async update<T>(accessId: string, change: (current: Account | undefined) => { account?: Account; result: T }): Promise<T> {
    const current = this.#accounts.get(accessId);
    const { account, result } = change(current && structuredClone(current));
    if (account !== undefined) {
      if (account.accessId !== accessId) throw new Error(`update of ${accessId} returned account ${account.accessId}`);
      this.#accounts.set(accessId, structuredClone(account));
    }
    return result;
  }

  async byAgent(agentId: string): Promise<Account[]> {
    return [...this.#accounts.values()].filter((a) => a.agentId === agentId).map((a) => structuredClone(a));
  }

  async byBuyer(buyerId: string): Promise<Account[]> {
    return [...this.#accounts.values()].filter((a) => a.buyerId === buyerId).map((a) => structuredClone(a));
  }

  async linkAgent(agentId: string, buyerId: string): Promise<void> {
    this.#links.add(`${agentId} ${buyerId}`);
  }

  async isLinked(agentId: string, buyerId: string): Promise<boolean> {
    return this.#links.has(`${agentId} ${buyerId}`);
  }

  async close(): Promise<void> {}
}
