import { type Hex, hexToBytes, keccak256, type LocalAccount, serializeTransaction, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { nativeSecp256k1 } from './signer-recovery.js';

/**
 * The settler's account, which signs every settlement transaction. viem signs with pure-JS
 * secp256k1, which costs more than the rest of a settlement's CPU put together; libsecp256k1
 * signs the same digest in a fraction of that, and the signatures are the same (both RFC 6979
 * deterministic, low-s), so the transaction and its hash are too. viem's account everywhere the
 * binding does not load, and for every other kind of signature.
 */
export function settlerAccount(privateKey: Hex): LocalAccount {
  const account = privateKeyToAccount(privateKey);
  let binding: ReturnType<typeof nativeSecp256k1>;
  try {
    binding = nativeSecp256k1();
  } catch {
    return account;
  }
  const key = hexToBytes(privateKey);
  return {
    ...account,
    async signTransaction(transaction, options) {
      // Blob transactions sign their payload without the sidecars; the settler sends none.
      if (transaction.type === 'eip4844') return account.signTransaction(transaction, options);
      const serializer = options?.serializer ?? serializeTransaction;
      const digest = keccak256(await serializer(transaction), 'bytes');
      const { signature, recid } = binding.ecdsaSign(digest, key);
      const r = toHex(signature.subarray(0, 32));
      const s = toHex(signature.subarray(32, 64));
      return serializer(transaction, { r, s, v: recid ? 28n : 27n, yParity: recid });
    },
  };
}
