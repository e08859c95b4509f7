import type { Address, Hex } from 'viem';

/**
 * EIP-3009 `transferWithAuthorization`, as both payment protocols carry it: the token's EIP-712
 * domain, the authorization a payer signs, and the two together with the signature. Types only:
 * hashing and recovery live with settlement.
 */
export type Eip712Domain = { name: string; version: string; chainId: number; verifyingContract: Address };

export type TransferAuthorization = {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
};

export type SignedAuthorization = { domain: Eip712Domain; authorization: TransferAuthorization; signature: Hex };
