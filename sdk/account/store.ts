import type { Account } from './account.js';

/**
 * Where a seller keeps its accounts. Two implementations ship (`MemoryAccountStore`,
 * `SqliteAccountStore`); a seller can write its own against its database.
 *
 * The one hard requirement is `update`: read, change and save one account atomically, so two
 * deliveries of writes for the same account (hub retries, several hub replicas) can never both
 * read the old state and both add the same credit.
 */
export interface AccountStore {
  get(accessId: string): Promise<Account | undefined>;

  /**
   * Runs `change` on the stored account (undefined when there is none) and saves the account it
   * returns, if any, as one atomic step. `change` is synchronous so nothing can interleave; if it
   * throws, nothing is saved.
   */
  update<T>(accessId: string, change: (current: Account | undefined) => { account?: Account; result: T }): Promise<T>;

  /** Accounts whose customer is this agent. */
  byAgent(agentId: string): Promise<Account[]>;
  /** Accounts of this buyer, whichever of its agents they were bought by. */
  byBuyer(buyerId: string): Promise<Account[]>;

  /** Records that a signed write or mint said this agent belongs to this buyer. */
  linkAgent(agentId: string, buyerId: string): Promise<void>;
  isLinked(agentId: string, buyerId: string): Promise<boolean>;

  close(): Promise<void>;
}
