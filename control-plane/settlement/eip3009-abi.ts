import { parseAbi } from 'viem';

/**
 * The slice of an EIP-3009 stablecoin that settlement uses: USDC's surface, which our HubUSD
 * contract also has. The custom errors are HubUSD's and OpenZeppelin's, so a simulated transfer on
 * our token reverts with a decodable reason; other tokens revert with strings (see revert-reason.ts).
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
