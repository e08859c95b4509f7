import { hexToBytes, type Hex } from 'viem';

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
