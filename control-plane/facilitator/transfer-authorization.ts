import { type Address, type Hex, hexToBytes, keccak256, parseAbi, stringToBytes } from 'viem';
import type { Eip712Domain, TransferAuthorization } from '../../shared/payments/eip3009.js';

/**
 * EIP-3009 `transferWithAuthorization` as settlement handles it: the EIP-712 digest the payer
 * signs, the signature split for recovery and for the token's `(v, r, s)` entry point, and the
 * token's ABI.
 *
 * The EIP-712 digest an EIP-3009 `TransferWithAuthorization` signature signs. Written out by hand
 * rather than through viem's generic `hashTypedData` because it sits on the hot path of every paid
 * request: the fixed layout needs three keccaks and no type parsing (bench/recover.ts measures
 * both; the tests check them equal).
 */

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
  return typedDataDigest(domain, keccak256(struct, 'bytes'));
}

/** The EIP-712 digest of a message whose struct hash is `structHash`: keccak256(0x1901 ‖ domain separator ‖ struct hash). */
export function typedDataDigest(domain: Eip712Domain, structHash: Uint8Array): Uint8Array {
  const message = new Uint8Array(2 + 32 + 32);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(domainSeparator(domain), 2);
  message.set(structHash, 34);
  return keccak256(message, 'bytes');
}

/** An address, left-padded to a 32-byte ABI word. */
export function writeAddress(target: Uint8Array, offset: number, address: Address): void {
  target.set(hexToBytes(address, { size: 20 }), offset + 12);
}

export function writeUint256(target: Uint8Array, offset: number, value: bigint): void {
  if (value < 0n || value >= 1n << 256n) throw new RangeError('uint256 out of range');
  let rest = value;
  for (let i = offset + 31; i >= offset && rest > 0n; i--) {
    target[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
}

/**
 * A 65-byte ECDSA signature `r ‖ s ‖ v`, split the way both recovery backends and the token's
 * `(v, r, s)` entry point want it. Refuses what the token contract would refuse, so a signature
 * that verifies here cannot revert on chain for its shape: `v` other than 27/28 (or 0/1), zero
 * `r`/`s`, and high-`s` (malleable) signatures.
 */

export type RecoverableSignature = {
  /** `r ‖ s`, 64 bytes. */
  compact: Uint8Array;
  recoveryId: 0 | 1;
  /** 27 or 28, as the contract's `v` argument. */
  v: 27 | 28;
  r: Hex;
  s: Hex;
};

/**
 * A payment's signature as the token will check it: an EOA's, recovered and split for the
 * `(v, r, s)` entry point, or a contract wallet's, passed whole to the `bytes signature` one, which
 * asks the wallet (ERC-1271).
 */
export type SettlementSignature = RecoverableSignature | { contractWallet: Hex };

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = SECP256K1_N / 2n;

export function parseRecoverableSignature(signature: Hex): RecoverableSignature | undefined {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return undefined;
  const bytes = hexToBytes(signature);
  const rawV = bytes[64]!;
  const recoveryId = rawV === 0 || rawV === 27 ? 0 : rawV === 1 || rawV === 28 ? 1 : undefined;
  if (recoveryId === undefined) return undefined;
  const r = BigInt(`0x${signature.slice(2, 66)}`);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  if (r === 0n || r >= SECP256K1_N || s === 0n || s > HALF_N) return undefined;
  return {
    compact: bytes.subarray(0, 64),
    recoveryId,
    v: recoveryId === 0 ? 27 : 28,
    r: `0x${signature.slice(2, 66)}`,
    s: `0x${signature.slice(66, 130)}`,
  };
}

/**
 * The slice of an EIP-3009 stablecoin that settlement uses: USDC's surface, which our HubUSD
 * contract also has. The custom errors are HubUSD's and OpenZeppelin's, so a simulated transfer on
 * our token reverts with a decodable reason; other tokens revert with strings (see chain-errors.ts).
 */
export const eip3009Abi = parseAbi([
  'function name() view returns (string)',
  'function version() view returns (string)',
  'function decimals() view returns (uint8)',
  'function balanceOf(address account) view returns (uint256)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'error AuthorizationNotYetValid(uint256 validAfter)',
  'error AuthorizationExpired(uint256 validBefore)',
  'error AuthorizationUsedOrCanceled(address authorizer, bytes32 nonce)',
  'error InvalidSignature()',
  'error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)',
]);
