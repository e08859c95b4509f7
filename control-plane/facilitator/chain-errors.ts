import { BaseError, ContractFunctionRevertedError, ContractFunctionZeroDataError, RpcRequestError } from 'viem';
import type { SettleFailureReason } from './results.js';

/**
 * What a failed JSON-RPC call tells settlement. Two questions matter: did the node answer at all
 * (if not, a transaction may or may not have been broadcast), and if a transfer reverted, why.
 */

/** True when the node itself answered with a JSON-RPC error; false for timeouts and network failures. */
export function nodeAnswered(err: unknown): boolean {
  return rpcErrorCode(err) !== undefined;
}

/** The code of the JSON-RPC error the node answered with, if it answered with one. */
export function rpcErrorCode(err: unknown): number | undefined {
  if (!(err instanceof BaseError)) return undefined;
  const answered = err.walk((e) => e instanceof RpcRequestError);
  return answered instanceof RpcRequestError ? answered.code : undefined;
}

/** The first line of an error, viem's short message when it has one: for logs and results. */
export function shortMessage(err: unknown): string {
  if (err instanceof Error)
    return ('shortMessage' in err && typeof err.shortMessage === 'string' ? err.shortMessage : err.message).split('\n')[0]!;
  return String(err);
}

/** True when a contract read got an answer that was not a result: a revert, or no code at the address. */
export function contractAnsweredWithout(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false;
  const found = err.walk((e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError);
  return found instanceof ContractFunctionRevertedError || found instanceof ContractFunctionZeroDataError;
}

// HubUSD's and OpenZeppelin's custom errors first, then the revert strings of USDC's FiatToken.
const byErrorName: Record<string, SettleFailureReason> = {
  AuthorizationUsedOrCanceled: 'nonce_already_used',
  AuthorizationExpired: 'authorization_expired',
  AuthorizationNotYetValid: 'authorization_not_yet_valid',
  InvalidSignature: 'invalid_signature',
  ERC20InsufficientBalance: 'insufficient_funds',
};
const byRevertString: [RegExp, SettleFailureReason][] = [
  [/authorization is used or canceled/i, 'nonce_already_used'],
  [/authorization is expired/i, 'authorization_expired'],
  [/authorization is not yet valid/i, 'authorization_not_yet_valid'],
  [/invalid signature/i, 'invalid_signature'],
  [/exceeds balance/i, 'insufficient_funds'],
];

/** The reason a simulated or mined transfer reverted, or undefined when `err` is not a revert. */
export function revertReason(err: unknown): { reason: SettleFailureReason; message: string } | undefined {
  if (!(err instanceof BaseError)) return undefined;
  const revert = err.walk((e) => e instanceof ContractFunctionRevertedError);
  if (!(revert instanceof ContractFunctionRevertedError)) return undefined;
  const name = revert.data?.errorName;
  if (name && byErrorName[name]) return { reason: byErrorName[name], message: name };
  const text = revert.reason ?? revert.shortMessage;
  const match = byRevertString.find(([pattern]) => pattern.test(text));
  return { reason: match?.[1] ?? 'transaction_reverted', message: text };
}
