import { randomBytes } from 'node:crypto';
import { type Account, isServiceable, type MintDecision, sha256Hex } from '../../sdk/index.js';

/**
 * The reference seller's own API keys: one live key per account (re-minting rotates, so
 * `maxKeys: 1`), kept only as SHA-256 hashes. hub passes the key to the buyer and never stores it;
 * if the buyer loses it, it asks for a new one and the old one stops working.
 */
export class KeyRing {
  readonly #byHash = new Map<string, string>();
  readonly #current = new Map<string, string>();

  mint(account: Account, at = new Date()): MintDecision {
    if (!isServiceable(account, at)) return { conflict: { code: account.status === 'suspended' ? 'account_suspended' : 'period_lapsed' } };
    const apiKey = `sk_demo_${randomBytes(24).toString('base64url')}`;
    const previous = this.#current.get(account.accessId);
    if (previous !== undefined) this.#byHash.delete(previous);
    const hash = sha256Hex(apiKey);
    this.#byHash.set(hash, account.accessId);
    this.#current.set(account.accessId, hash);
    const decision: MintDecision = { apiKey, maxKeys: 1 };
    if (account.period.end !== null) decision.keyExpiresAt = account.period.end;
    return decision;
  }

  /** The account a key was minted for, while it is the account's current key. */
  accountOf(apiKey: string): string | undefined {
    return this.#byHash.get(sha256Hex(apiKey));
  }
}
