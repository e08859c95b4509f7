import { hexToBytes, keccak256, stringToBytes, type Address } from 'viem';

/**
 * The EIP-712 digest an EIP-3009 `TransferWithAuthorization` signature signs. Written out by hand
 * rather than through viem's generic `hashTypedData` because it sits on the hot path of every paid
 * request: the fixed layout needs three keccaks and no type parsing (bench/recover.ts measures
 * both; the tests check them equal).
 */

import type { Eip712Domain, TransferAuthorization } from '../../shared/payments/eip3009.js';

export type { Eip712Domain, TransferAuthorization };

/** The typed-data types, for signers (`signTypedData({ types, primaryType: 'TransferWithAuthorization', … })`). */
export const transferWithAuthorizationTypes = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

const DOMAIN_TYPEHASH = keccak256(
  stringToBytes('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
  'bytes',
);
const TRANSFER_TYPEHASH = keccak256(
  stringToBytes('TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)'),
  'bytes',
);

// A facilitator settles a handful of tokens, so their separators are computed once each.
const separators = new Map<string, Uint8Array>();
const MAX_SEPARATORS = 256;

export function domainSeparator(domain: Eip712Domain): Uint8Array {
  const key = `${domain.chainId}:${domain.verifyingContract.toLowerCase()}:${domain.name}:${domain.version}`;
  let separator = separators.get(key);
  if (!separator) {
    const words = new Uint8Array(5 * 32);
    words.set(DOMAIN_TYPEHASH, 0);
    words.set(keccak256(stringToBytes(domain.name), 'bytes'), 32);
    words.set(keccak256(stringToBytes(domain.version), 'bytes'), 64);
    writeUint256(words, 96, BigInt(domain.chainId));
    writeAddress(words, 128, domain.verifyingContract);
    separator = keccak256(words, 'bytes');
    if (separators.size >= MAX_SEPARATORS) separators.clear();
    separators.set(key, separator);
  }
  return separator;
}

export function transferAuthorizationDigest(domain: Eip712Domain, authorization: TransferAuthorization): Uint8Array {
  const struct = new Uint8Array(7 * 32);
  struct.set(TRANSFER_TYPEHASH, 0);
  writeAddress(struct, 32, authorization.from);
  writeAddress(struct, 64, authorization.to);
  writeUint256(struct, 96, authorization.value);
  writeUint256(struct, 128, authorization.validAfter);
  writeUint256(struct, 160, authorization.validBefore);
  struct.set(hexToBytes(authorization.nonce, { size: 32 }), 192);

  const message = new Uint8Array(2 + 32 + 32);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(domainSeparator(domain), 2);
  message.set(keccak256(struct, 'bytes'), 34);
  return keccak256(message, 'bytes');
}

/** An address, left-padded to a 32-byte ABI word. */
function writeAddress(target: Uint8Array, offset: number, address: Address): void {
  target.set(hexToBytes(address, { size: 20 }), offset + 12);
}

function writeUint256(target: Uint8Array, offset: number, value: bigint): void {
  if (value < 0n || value >= 1n << 256n) throw new RangeError('uint256 out of range');
  let rest = value;
  for (let i = offset + 31; i >= offset && rest > 0n; i--) {
    target[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
}
