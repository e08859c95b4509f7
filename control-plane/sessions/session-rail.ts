import { type Address, decodeFunctionResult, encodeAbiParameters, encodeFunctionData, type Hex, keccak256, parseAbi } from 'viem';
import { BATCH_SETTLEMENT_CONTRACT, ERC3009_DEPOSIT_COLLECTOR } from '../../shared/payments/batch-settlement.js';
import { evmChainIdOf } from '../../shared/payments/evm-network.js';
import type { SignatureReads } from '../facilitator/contract-signature.js';
import type { CallOutcome, LocalFacilitator } from '../facilitator/local-facilitator.js';
import { eip3009Abi } from '../facilitator/transfer-authorization.js';
import { batchSettlementDomain, type ChannelConfig, channelIdOf } from './channel-digests.js';

/**
 * The chain side of sessions on a rail: the channel contract's state, and the deposits hub's
 * settler submits (and pays the gas of) for payers. hub is every channel's receiver authorizer
 * through the settler's key (docs/decisions.md#D-283).
 */
export type SessionRail = {
  /** Signs claims for hub's channels: the settler's address. */
  receiverAuthorizer: Address;
  /** Seconds a payer's timed withdrawal waits, offered in every 402 (docs/decisions.md#D-283). */
  withdrawDelay: number;
  /** The channel as the chain holds it (zero for a channel never funded). */
  channel(channelId: Hex): Promise<{ balance: bigint; totalClaimed: bigint }>;
  /**
   * Submits a payer's deposit: its ERC-3009 authorization of `amount` to the collector, bound to
   * the channel. `voucher` is the one that came with it (a facilitator checks it before it deposits).
   */
  deposit(config: ChannelConfig, amount: bigint, authorization: Erc3009Deposit, voucher: DepositVoucher): Promise<CallOutcome>;
  /** Claims channels' vouchers in one `claimWithSignature`, the batch signed as their receiver authorizer. */
  claim(claims: VoucherClaim[]): Promise<CallOutcome>;
  /** What the chain counts for a receiver in a token: claimed for it in all, and sent to it in all. */
  receiverTotals(receiver: Address, token: Address): Promise<{ totalClaimed: bigint; totalSettled: bigint }>;
  /** Sends a receiver everything claimed for it in `token` and not sent yet (the contract's `settle`). */
  settle(receiver: Address, token: Address): Promise<CallOutcome>;
  /** How many cooperative refunds the channel has had: the nonce the next one is signed for. */
  refundNonce(channelId: Hex): Promise<bigint>;
  /**
   * A cooperative refund of `amount` to the channel's payer, signed as its receiver authorizer for
   * `nonce`, after the channel's claim when one is given, in one transaction (the contract's
   * `multicall`): what was charged becomes the receiver's before the rest goes back.
   */
  refund(input: { config: ChannelConfig; amount: bigint; nonce: bigint; claim?: VoucherClaim }): Promise<CallOutcome>;
  /**
   * Each channel's balance and the payer's timed withdrawal under way on it (`withdrawRequestedAt`
   * 0: none), read in one call through the contract's `multicall`.
   */
  withdrawals(channelIds: Hex[]): Promise<{ balance: bigint; withdrawRequestedAt: number }[]>;
  /** The chain's clock: the latest block's timestamp, unix seconds (what `finalizeWithdraw` is checked against). */
  chainTime(): Promise<number>;
  /**
   * True when the deposit's ERC-3009 authorization is used on chain (as of the latest block): its
   * nonce is bound to the channel, so the deposit is in the channel.
   */
  depositLanded(config: ChannelConfig, salt: Hex): Promise<boolean>;
  /**
   * The chain reads that judge a voucher's signature as the channel contract will
   * (facilitator/contract-signature.ts): needed for a channel with no payer authorizer.
   */
  signatureReads: SignatureReads;
  /**
   * Whether a 402 offers sessions now: a remote facilitator's `/supported` lists the scheme on the
   * rail's network (docs/decisions.md#D-361). Always, when absent (the local rail, whose contract hub placed).
   */
  offered?(): Promise<boolean>;
};

/** One channel's row of a claim: its latest voucher, and the total to raise its claimed amount to. */
export type VoucherClaim = { config: ChannelConfig; maxClaimableAmount: bigint; signature: Hex; totalClaimed: bigint };

/** The voucher a deposit payload carries, spending from the deposit. */
export type DepositVoucher = { maxClaimableAmount: bigint; signature: Hex };

/** The ERC-3009 half of a deposit payload, as x402's client signs it. */
export type Erc3009Deposit = { validAfter: string; validBefore: string; salt: Hex; signature: Hex };

export const batchSettlementAbi = parseAbi([
  'struct ChannelConfig { address payer; address payerAuthorizer; address receiver; address receiverAuthorizer; address token; uint40 withdrawDelay; bytes32 salt; }',
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
  'function deposit(ChannelConfig config, uint128 amount, address collector, bytes collectorData)',
  'struct Voucher { ChannelConfig channel; uint128 maxClaimableAmount; }',
  'struct VoucherClaim { Voucher voucher; bytes signature; uint128 totalClaimed; }',
  'function claimWithSignature(VoucherClaim[] voucherClaims, bytes authorizerSignature)',
  'function receivers(address receiver, address token) view returns (uint128 totalClaimed, uint128 totalSettled)',
  'function settle(address receiver, address token)',
  'function refundNonce(bytes32 channelId) view returns (uint256)',
  'function refundWithSignature(ChannelConfig config, uint128 amount, uint256 nonce, bytes receiverAuthorizerSignature)',
  'function multicall(bytes[] data) returns (bytes[] results)',
  'function pendingWithdrawals(bytes32 channelId) view returns (uint128 amount, uint40 initiatedAt)',
]);

/** The claim batch the receiver authorizer signs: the scheme's `ClaimBatch` type. */
export const claimBatchTypes = {
  ClaimBatch: [{ name: 'claims', type: 'ClaimEntry[]' }],
  ClaimEntry: [
    { name: 'channelId', type: 'bytes32' },
    { name: 'maxClaimableAmount', type: 'uint128' },
    { name: 'totalClaimed', type: 'uint128' },
  ],
} as const;

/** The typed data a receiver authorizer signs for a `claimWithSignature` batch of `claims`. */
export function claimBatchTypedData(claims: VoucherClaim[], chainId: number) {
  return {
    domain: batchSettlementDomain(chainId),
    types: claimBatchTypes,
    primaryType: 'ClaimBatch' as const,
    message: {
      claims: claims.map((c) => ({
        channelId: channelIdOf(c.config, chainId),
        maxClaimableAmount: c.maxClaimableAmount,
        totalClaimed: c.totalClaimed,
      })),
    },
  };
}

/** A cooperative refund the receiver authorizer signs: the scheme's `Refund` type. */
export const refundTypes = {
  Refund: [
    { name: 'channelId', type: 'bytes32' },
    { name: 'nonce', type: 'uint256' },
    { name: 'amount', type: 'uint128' },
  ],
} as const;

/** A day: long enough for claims on any schedule to land before a payer's withdrawal can finish. */
export const WITHDRAW_DELAY_SECONDS = 86_400;

/** Sessions on a local chain whose deployment placed hub's batch-settlement contracts. */
export function localSessionRail(facilitator: LocalFacilitator): SessionRail {
  return {
    receiverAuthorizer: facilitator.settlerAddress as Address,
    withdrawDelay: WITHDRAW_DELAY_SECONDS,
    async channel(channelId) {
      const data = encodeFunctionData({ abi: batchSettlementAbi, functionName: 'channels', args: [channelId] });
      const answer = await facilitator.readCall({ to: BATCH_SETTLEMENT_CONTRACT, data });
      const [balance, totalClaimed] = decodeFunctionResult({ abi: batchSettlementAbi, functionName: 'channels', data: answer });
      return { balance, totalClaimed };
    },
    deposit(config, amount, authorization) {
      // What the collector decodes: the window, the salt its nonce is bound with, the signature.
      const collectorData = encodeAbiParameters(
        [{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
        [BigInt(authorization.validAfter), BigInt(authorization.validBefore), BigInt(authorization.salt), authorization.signature],
      );
      const data = encodeFunctionData({
        abi: batchSettlementAbi,
        functionName: 'deposit',
        args: [config, amount, ERC3009_DEPOSIT_COLLECTOR, collectorData],
      });
      return facilitator.sendCall({ to: BATCH_SETTLEMENT_CONTRACT, data });
    },
    async claim(claims) {
      return facilitator.sendCall({ to: BATCH_SETTLEMENT_CONTRACT, data: await claimCalldata(facilitator, claims) });
    },
    async receiverTotals(receiver, token) {
      const data = encodeFunctionData({ abi: batchSettlementAbi, functionName: 'receivers', args: [receiver, token] });
      const answer = await facilitator.readCall({ to: BATCH_SETTLEMENT_CONTRACT, data });
      const [totalClaimed, totalSettled] = decodeFunctionResult({ abi: batchSettlementAbi, functionName: 'receivers', data: answer });
      return { totalClaimed, totalSettled };
    },
    settle(receiver, token) {
      const data = encodeFunctionData({ abi: batchSettlementAbi, functionName: 'settle', args: [receiver, token] });
      return facilitator.sendCall({ to: BATCH_SETTLEMENT_CONTRACT, data });
    },
    async refundNonce(channelId) {
      const data = encodeFunctionData({ abi: batchSettlementAbi, functionName: 'refundNonce', args: [channelId] });
      const answer = await facilitator.readCall({ to: BATCH_SETTLEMENT_CONTRACT, data });
      return decodeFunctionResult({ abi: batchSettlementAbi, functionName: 'refundNonce', data: answer });
    },
    async refund({ config, amount, nonce, claim }) {
      const chainId = chainIdOf(facilitator);
      const signature = await facilitator.signTypedData({
        domain: batchSettlementDomain(chainId),
        types: refundTypes,
        primaryType: 'Refund',
        message: { channelId: channelIdOf(config, chainId), nonce, amount },
      });
      const refund = encodeFunctionData({
        abi: batchSettlementAbi,
        functionName: 'refundWithSignature',
        args: [config, amount, nonce, signature],
      });
      const data = claim
        ? encodeFunctionData({
            abi: batchSettlementAbi,
            functionName: 'multicall',
            args: [[await claimCalldata(facilitator, [claim]), refund]],
          })
        : refund;
      return facilitator.sendCall({ to: BATCH_SETTLEMENT_CONTRACT, data });
    },
    chainTime() {
      return facilitator.blockTime();
    },
    async depositLanded(config, salt) {
      const nonce = depositNonce(channelIdOf(config, chainIdOf(facilitator)), salt);
      const data = encodeFunctionData({ abi: eip3009Abi, functionName: 'authorizationState', args: [config.payer, nonce] });
      const answer = await facilitator.readCall({ to: config.token, data });
      return decodeFunctionResult({ abi: eip3009Abi, functionName: 'authorizationState', data: answer });
    },
    signatureReads: facilitator.signatureReads,
    async withdrawals(channelIds) {
      if (channelIds.length === 0) return [];
      return withdrawalsOf(channelIds, await facilitator.readCall({ to: BATCH_SETTLEMENT_CONTRACT, data: withdrawalsCall(channelIds) }));
    },
  };
}

/** One read of the channel contract (its `multicall`) for each channel's balance and pending withdrawal. */
export function withdrawalsCall(channelIds: Hex[]): Hex {
  const calls = channelIds.flatMap((id) => [
    encodeFunctionData({ abi: batchSettlementAbi, functionName: 'channels', args: [id] }),
    encodeFunctionData({ abi: batchSettlementAbi, functionName: 'pendingWithdrawals', args: [id] }),
  ]);
  return encodeFunctionData({ abi: batchSettlementAbi, functionName: 'multicall', args: [calls] });
}

/** What `withdrawalsCall` answered, a channel at a time. */
export function withdrawalsOf(channelIds: Hex[], answer: Hex): { balance: bigint; withdrawRequestedAt: number }[] {
  const results = decodeFunctionResult({ abi: batchSettlementAbi, functionName: 'multicall', data: answer });
  return channelIds.map((_, i) => {
    const [balance] = decodeFunctionResult({ abi: batchSettlementAbi, functionName: 'channels', data: results[2 * i]! });
    const [, initiatedAt] = decodeFunctionResult({
      abi: batchSettlementAbi,
      functionName: 'pendingWithdrawals',
      data: results[2 * i + 1]!,
    });
    return { balance, withdrawRequestedAt: initiatedAt };
  });
}

/** The ERC-3009 nonce a deposit's authorization is signed with: bound to its channel by the collector. */
export function depositNonce(channelId: Hex, salt: Hex): Hex {
  return keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'bytes32' }], [channelId, salt]));
}

function chainIdOf(facilitator: LocalFacilitator): number {
  return evmChainIdOf(facilitator.network);
}

/** A `claimWithSignature` of the channels' vouchers, the batch signed with the settler's key as their receiver authorizer. */
async function claimCalldata(facilitator: LocalFacilitator, claims: VoucherClaim[]): Promise<Hex> {
  const chainId = chainIdOf(facilitator);
  const authorizerSignature = await facilitator.signTypedData(claimBatchTypedData(claims, chainId));
  const voucherClaims = claims.map((c) => ({
    voucher: { channel: c.config, maxClaimableAmount: c.maxClaimableAmount },
    signature: c.signature,
    totalClaimed: c.totalClaimed,
  }));
  return encodeFunctionData({ abi: batchSettlementAbi, functionName: 'claimWithSignature', args: [voucherClaims, authorizerSignature] });
}
