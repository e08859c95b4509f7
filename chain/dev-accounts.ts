import { pbkdf2Sync } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { toHex } from 'viem';
import { HDKey, hdKeyToAccount } from 'viem/accounts';

/**
 * anvil's well-known development accounts. Their keys are public knowledge: fine for a local chain,
 * never for anything that holds value.
 */

export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';

export type DevAccount = { address: Address; privateKey: Hex };

/** The first `count` accounts of `mnemonic` on anvil's derivation path m/44'/60'/0'/0/<i>. */
export function devAccounts(count: number, mnemonic: string = DEV_MNEMONIC): DevAccount[] {
  // BIP-39 seed with Node's native PBKDF2: deriving it once instead of per account saves ~50 ms each.
  const seed = pbkdf2Sync(mnemonic.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512');
  const root = HDKey.fromMasterSeed(seed);
  return Array.from({ length: count }, (_, addressIndex) => {
    const account = hdKeyToAccount(root, { addressIndex });
    return { address: account.address, privateKey: toHex(account.getHdKey().privateKey!) };
  });
}
