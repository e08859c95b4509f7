import { type Address, bytesToHex, type Hex, hexToBytes, keccak256, stringToBytes } from 'viem';
import { BATCH_SETTLEMENT_CONTRACT, BATCH_SETTLEMENT_DOMAIN } from '../../shared/payments/batch-settlement.js';
import type { Eip712Domain } from '../../shared/payments/eip3009.js';
import { typedDataDigest, writeAddress, writeUint256 } from '../facilitator/transfer-authorization.js';

/**
 * The EIP-712 digests of x402's batch-settlement scheme, written out as the EIP-3009 one is
 * (docs/decisions.md#D-177): a channel's id (the hash of its config) and the digest a payer's
 * voucher signs. They sit on the path of every voucher call; a property test holds them equal to
 * viem's `hashTypedData` and to x402's own client.
 */

export type ChannelConfig = {
  payer: Address;
  payerAuthorizer: Address;
  receiver: Address;
  receiverAuthorizer: Address;
  token: Address;
  withdrawDelay: number;
  salt: Hex;
};

/** A channel's config as its mirror row stores it (`SessionChannel`, read on the SQL lane). */
export function channelConfigOf(row: Record<keyof ChannelConfig, unknown>): ChannelConfig {
  return {
    payer: row.payer as Address,
    payerAuthorizer: row.payerAuthorizer as Address,
    receiver: row.receiver as Address,
    receiverAuthorizer: row.receiverAuthorizer as Address,
    token: row.token as Address,
    withdrawDelay: Number(row.withdrawDelay),
    salt: row.salt as Hex,
  };
}

const CHANNEL_CONFIG_TYPEHASH = keccak256(
  stringToBytes(
    'ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)',
  ),
  'bytes',
);
const VOUCHER_TYPEHASH = keccak256(stringToBytes('Voucher(bytes32 channelId,uint128 maxClaimableAmount)'), 'bytes');

/** The scheme's EIP-712 domain on a chain: its contract at the address x402's client signs for. */
export function batchSettlementDomain(chainId: number): Eip712Domain {
  return { ...BATCH_SETTLEMENT_DOMAIN, chainId, verifyingContract: BATCH_SETTLEMENT_CONTRACT };
}

/** The channel's id, lowercase: the EIP-712 hash of its config, bound to the chain and the contract. */
export function channelIdOf(config: ChannelConfig, chainId: number): Hex {
  const struct = new Uint8Array(8 * 32);
  struct.set(CHANNEL_CONFIG_TYPEHASH, 0);
  writeAddress(struct, 32, config.payer);
  writeAddress(struct, 64, config.payerAuthorizer);
  writeAddress(struct, 96, config.receiver);
  writeAddress(struct, 128, config.receiverAuthorizer);
  writeAddress(struct, 160, config.token);
  writeUint256(struct, 192, BigInt(config.withdrawDelay));
  struct.set(hexToBytes(config.salt, { size: 32 }), 224);
  return bytesToHex(typedDataDigest(batchSettlementDomain(chainId), keccak256(struct, 'bytes')));
}

/** What a voucher for `maxClaimableAmount` on the channel signs. */
export function voucherDigest(channelId: Hex, maxClaimableAmount: bigint, chainId: number): Uint8Array {
  const struct = new Uint8Array(3 * 32);
  struct.set(VOUCHER_TYPEHASH, 0);
  struct.set(hexToBytes(channelId, { size: 32 }), 32);
  writeUint256(struct, 64, maxClaimableAmount);
  return typedDataDigest(batchSettlementDomain(chainId), keccak256(struct, 'bytes'));
}
