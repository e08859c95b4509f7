import { type Address, encodeFunctionData, type Hex, parseAbi } from 'viem';
import { nodeAnswered } from './chain-errors.js';
import { FacilitatorUnavailableError } from './facilitator.js';

/**
 * ERC-1271: a contract wallet's say on whether a signature is its own. What a token checking an
 * EIP-3009 authorization and the batch-settlement contract checking a voucher (OpenZeppelin's
 * `SignatureChecker`) ask when no key recovers the signer: hub asks the same before sending
 * anything, so it takes exactly the signatures the chain will.
 */

const erc1271Abi = parseAbi(['function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)']);
/** What `isValidSignature` answers for a signature the wallet takes: its own selector. */
const ERC1271_ACCEPTED = '0x1626ba7e';

/**
 * Whether `account` takes `signature` over `digest` as its own, read with `read` (an eth_call at
 * the latest block). An account with no code answers nothing, and a node that answered with an
 * error (no such function, a revert) refused it: both are no. A node that did not answer throws
 * (`FacilitatorUnavailableError`), for the caller to answer 503.
 */
export async function contractSigned(
  read: (to: Address, data: Hex) => Promise<Hex>,
  account: Address,
  digest: Hex,
  signature: Hex,
): Promise<boolean> {
  let answer: Hex;
  try {
    answer = await read(account, encodeFunctionData({ abi: erc1271Abi, functionName: 'isValidSignature', args: [digest, signature] }));
  } catch (err) {
    if (err instanceof FacilitatorUnavailableError && nodeAnswered(err.cause)) return false;
    throw err;
  }
  return answer.slice(0, 10).toLowerCase() === ERC1271_ACCEPTED;
}
