import { type Address, encodeFunctionData, type Hex, hexToBytes, type PublicClient, parseAbi } from 'viem';
import { nodeAnswered, rpcErrorCode, shortMessage } from './chain-errors.js';
import { FacilitatorUnavailableError } from './facilitator.js';

/**
 * Signatures judged as the chain judges them: OpenZeppelin's `SignatureChecker` (5.x), which the
 * dev chain's token, x402's batch-settlement contract and hub's own use. An account without code
 * signs with its key; an account with code (a contract wallet, or an EOA delegated by EIP-7702)
 * only by ERC-1271, its `isValidSignature` answering its own selector. hub asks the same before it
 * takes a payment, so it takes no signature that a claim or a transfer will then refuse.
 */

/** What judging a signature needs to read. Both throw `FacilitatorUnavailableError` when the node does not answer. */
export type SignatureReads = {
  /** eth_call of `to` with `data` at the latest block, burning at most `gas`. */
  call(to: Address, data: Hex, gas: bigint): Promise<Hex>;
  /** Whether `account` has code. */
  hasCode(account: Address): Promise<boolean>;
};

/**
 * The reads through a node client, each run through `guard`, which turns a node that did not answer
 * into `FacilitatorUnavailableError` (keeping the node's error as its cause).
 */
export function signatureReadsOf(
  reader: Pick<PublicClient, 'call' | 'getCode'>,
  guard: <T>(read: () => Promise<T>) => Promise<T>,
): SignatureReads {
  return {
    call: (to, data, gas) => guard(async () => (await reader.call({ to, data, gas })).data ?? '0x'),
    hasCode: (account) =>
      guard(async () => {
        const code = await reader.getCode({ address: account });
        return code !== undefined && code !== '0x';
      }),
  };
}

const erc1271Abi = parseAbi(['function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)']);
/** What `isValidSignature` answers for a signature the wallet takes: its selector, as a 32-byte word. */
const ERC1271_ACCEPTED = `0x1626ba7e${'0'.repeat(56)}`;
/** Gas a wallet's check may burn when hub asks: ample for a signature check, and a bound on what a wallet can make hub's node spend. */
export const ERC1271_GAS = 200_000n;
/**
 * Gas a contract wallet's EIP-3009 transfer may take: the token's own work and the wallet's check.
 * One estimated past it is refused, so a wallet cannot make its payments cost hub a block's gas.
 */
export const CONTRACT_WALLET_TRANSFER_GAS = 150_000n + ERC1271_GAS;

/**
 * Whether `account` takes `signature` over `digest` as its own (ERC-1271), as `SignatureChecker`
 * reads the answer: at least 32 bytes, the first word the selector. An account with no code answers
 * nothing; a revert (or a check past `ERC1271_GAS`) refuses. Any other error of the node's (a rate
 * limit, an internal error) says nothing: it throws, for the caller to answer 503.
 */
export async function contractSigned(reads: SignatureReads, account: Address, digest: Hex, signature: Hex): Promise<boolean> {
  let answer: Hex;
  try {
    const data = encodeFunctionData({ abi: erc1271Abi, functionName: 'isValidSignature', args: [digest, signature] });
    answer = await reads.call(account, data, ERC1271_GAS);
  } catch (err) {
    if (err instanceof FacilitatorUnavailableError && refusedByNode(err.cause)) return false;
    throw err;
  }
  return answer.length >= 66 && answer.slice(0, 66).toLowerCase() === ERC1271_ACCEPTED;
}

/** The node ran the call and it failed: a revert, or the gas it was given ran out. */
function refusedByNode(err: unknown): boolean {
  // The node's own words are in the error's full message (viem's short one may only summarize them).
  const said = err instanceof Error ? err.message : shortMessage(err);
  return nodeAnswered(err) && (rpcErrorCode(err) === 3 || /revert|out of gas/i.test(said));
}

/**
 * Whether a 65-byte ECDSA signature is one the chain's `ecrecover` takes as it is: `v` 27 or 28
 * (OpenZeppelin's `ECDSA` passes the byte through; 0 or 1 recovers no one on chain, though it
 * recovers off it). Shape and low `s` are `parseRecoverableSignature`'s to check.
 */
export function chainRecoverable(signature: Hex): boolean {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return false;
  const v = hexToBytes(signature)[64];
  return v === 27 || v === 28;
}

/**
 * Whether `signature` over `digest` is `signer`'s as `SignatureChecker.isValidSignatureNow` judges
 * it: with code, by ERC-1271 alone; without, by its key (`recover`, done locally, names who signed).
 */
export async function signedAsOnChain(
  reads: SignatureReads,
  signer: Address,
  digest: Hex,
  signature: Hex,
  recover: () => Promise<string | undefined>,
): Promise<boolean> {
  if (await reads.hasCode(signer)) return contractSigned(reads, signer, digest, signature);
  return chainRecoverable(signature) && (await recover())?.toLowerCase() === signer.toLowerCase();
}
