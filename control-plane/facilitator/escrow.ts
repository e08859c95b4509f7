import { type Address, parseAbi } from 'viem';

/**
 * HubEscrow (contracts/HubEscrow.sol) as settlement calls it: reserve-and-pay-actual for
 * ceiling-priced calls. The payer's `exact` authorization names the escrow as its recipient; the
 * settler submits it to the escrow with the split, and one transaction pays the seller what was
 * charged and returns the rest to the payer.
 */

/** How an escrowed authorization is paid out (token units). */
export type EscrowSplit = {
  escrow: Address;
  payee: Address;
  charged: bigint;
  /** The authorization reached the token without the escrow (someone submitted it directly): only pay it out. */
  deposited?: boolean;
};

/**
 * What an escrowed authorization pays the seller; the rest goes back to the payer. `deposited`:
 * hub moved it into the escrow earlier (a held purchase), so only its payout is left.
 */
export type EscrowPayout = Pick<EscrowSplit, 'payee' | 'charged' | 'deposited'>;

export const escrowAbi = parseAbi([
  'struct Authorization { address from; uint256 value; uint256 validAfter; uint256 validBefore; bytes32 nonce; }',
  'struct Signature { uint8 v; bytes32 r; bytes32 s; }',
  'function operator() view returns (address)',
  'function settled(bytes32 key) view returns (bool)',
  'function settle(address token, Authorization authorization, Signature signature, address payee, uint256 charged, bool deposited)',
  'event Settled(address indexed token, address indexed payer, bytes32 indexed nonce, address payee, uint256 charged, uint256 returned)',
  'error NotOperator(address caller)',
  'error ChargeExceedsAuthorization(uint256 charged, uint256 value)',
  'error AlreadySettled(address token, address payer, bytes32 nonce)',
  'error NotDeposited(address token, address payer, bytes32 nonce)',
  // The token's errors, which the escrow's call to it passes on.
  'error AuthorizationNotYetValid(uint256 validAfter)',
  'error AuthorizationExpired(uint256 validBefore)',
  'error AuthorizationUsedOrCanceled(address authorizer, bytes32 nonce)',
  'error InvalidSignature()',
  'error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)',
]);
