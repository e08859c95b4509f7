import { type Address, getAddress, type Hex, isAddress, keccak256, stringToBytes } from 'viem';
import { microsToTokenUnits } from '../../money.js';
import type { Challenge } from './challenge.js';
import { failed, isPlainObject, type Parsed, parsed } from './encoding.js';

/**
 * The `evm` payment method's `charge` intent: the payer signs an EIP-3009
 * `TransferWithAuthorization` (EIP-712) for the exact amount, and the server submits it.
 *
 * Request (the challenge's `request` JSON), as mppx 0.11's EVM client reads it:
 *   { amount: "<atomic units>", currency: <token>, recipient: <payee>,
 *     methodDetails: { chainId, credentialTypes: ["authorization"], decimals,
 *                      authorization: { name, version } } }
 * mppx takes the token's EIP-712 name and version from its own configuration, not from the
 * request; hub still sends them in `methodDetails.authorization` (the name mppx gives that
 * configuration) so that other clients can sign without knowing the token, and so that hub can
 * verify statelessly from the HMAC-bound echo.
 *
 * Payload (the credential's `payload`), as mppx writes it:
 *   { type: "authorization", from, to, value, validAfter: "0", validBefore: <challenge expires>,
 *     nonce: keccak256(utf8(challenge.id + challenge.realm)), signature: <65 bytes> }
 * The nonce ties the authorization to one challenge, so it cannot pay for any other.
 */

export const EVM_METHOD = 'evm';
export const CHARGE_INTENT = 'charge';

export type EvmChargeRequest = {
  /** Token atomic units, decimal. */
  amount: string;
  currency: Address;
  recipient: Address;
  description?: string;
  externalId?: string;
  methodDetails: {
    chainId: number;
    credentialTypes: ['authorization'];
    decimals: number;
    /** The token's EIP-712 domain name and version. */
    authorization: { name: string; version: string };
  };
};

/** An EIP-3009 token: its address and what its EIP-712 domain and amounts need. */
export type EvmToken = { address: string; decimals: number; name: string; version: string };

export type EvmChargeTerms = {
  /** Price in micro-USD; converted to token units rounding up, as `microsToTokenUnits` does. */
  priceMicros: bigint;
  chainId: number;
  token: EvmToken;
  recipient: string;
  description?: string;
};

export type EvmAuthorizationPayload = {
  type: 'authorization';
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
  signature: Hex;
};

const UINT256 = /^(?:0|[1-9][0-9]{0,77})$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
// r ‖ s ‖ v. Longer (smart-wallet) signatures are refused: hub settles through `(v, r, s)`.
const SIGNATURE_65 = /^0x[0-9a-fA-F]{130}$/;
const DOMAIN_TEXT_MAX = 128;

function isUint256(value: unknown): value is string {
  return typeof value === 'string' && UINT256.test(value) && BigInt(value) < 1n << 256n;
}

function isChainId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function isDomainText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= DOMAIN_TEXT_MAX;
}

/** The `request` of a charge challenge for a price in micro-USD. Throws on impossible terms. */
export function evmChargeRequest(terms: EvmChargeTerms): EvmChargeRequest {
  const { priceMicros, chainId, token } = terms;
  if (priceMicros < 0n) throw new RangeError('a price cannot be negative');
  if (!isChainId(chainId)) throw new RangeError(`not a chain id: ${chainId}`);
  if (!Number.isInteger(token.decimals) || token.decimals < 0 || token.decimals > 77)
    throw new RangeError(`not token decimals: ${token.decimals}`);
  if (!isDomainText(token.name) || !isDomainText(token.version)) throw new TypeError('the token needs an EIP-712 name and version');
  return {
    amount: microsToTokenUnits(priceMicros, token.decimals).toString(),
    currency: getAddress(token.address),
    recipient: getAddress(terms.recipient),
    ...(terms.description !== undefined ? { description: terms.description } : {}),
    methodDetails: {
      chainId,
      credentialTypes: ['authorization'],
      decimals: token.decimals,
      authorization: { name: token.name, version: token.version },
    },
  };
}

/** A charge request, as echoed in a credential. */
export function parseEvmChargeRequest(request: unknown): Parsed<EvmChargeRequest, 'invalid_request'> {
  const bad = (detail: string) => failed('invalid_request', detail);
  if (!isPlainObject(request)) return bad('request must be an object');
  const { amount, currency, recipient, description, externalId, methodDetails: details } = request;
  if (!isUint256(amount)) return bad('amount must be a uint256 decimal string');
  if (typeof currency !== 'string' || !isAddress(currency, { strict: false })) return bad('currency must be an address');
  if (typeof recipient !== 'string' || !isAddress(recipient, { strict: false })) return bad('recipient must be an address');
  if (description !== undefined && typeof description !== 'string') return bad('description must be a string');
  if (externalId !== undefined && typeof externalId !== 'string') return bad('externalId must be a string');
  if (!isPlainObject(details)) return bad('methodDetails must be an object');
  const { chainId, credentialTypes, decimals, authorization, splits } = details;
  if (!isChainId(chainId)) return bad('methodDetails.chainId must be a positive integer');
  if (!Array.isArray(credentialTypes) || !credentialTypes.includes('authorization'))
    return bad('methodDetails.credentialTypes must include "authorization"');
  if (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 77)
    return bad('methodDetails.decimals must be an integer');
  if (!isPlainObject(authorization) || !isDomainText(authorization.name) || !isDomainText(authorization.version)) {
    return bad('methodDetails.authorization must name the token domain');
  }
  if (splits !== undefined && !(Array.isArray(splits) && splits.length === 0)) return bad('payment splits are not supported');
  return parsed({
    amount,
    currency: getAddress(currency),
    recipient: getAddress(recipient),
    ...(description !== undefined ? { description } : {}),
    ...(externalId !== undefined ? { externalId } : {}),
    methodDetails: {
      chainId,
      credentialTypes: ['authorization'],
      decimals,
      authorization: { name: authorization.name, version: authorization.version },
    },
  });
}

/** The `authorization` payload of an `evm` credential. */
export function parseEvmAuthorizationPayload(payload: unknown): Parsed<EvmAuthorizationPayload, 'invalid_payload'> {
  const bad = (detail: string) => failed('invalid_payload', detail);
  if (!isPlainObject(payload)) return bad('payload must be an object');
  const { type, from, to, value, validAfter, validBefore, nonce, signature } = payload;
  if (type !== 'authorization') return bad('payload.type must be "authorization"');
  if (typeof from !== 'string' || !isAddress(from, { strict: false })) return bad('payload.from must be an address');
  if (typeof to !== 'string' || !isAddress(to, { strict: false })) return bad('payload.to must be an address');
  if (!isUint256(value) || !isUint256(validAfter) || !isUint256(validBefore))
    return bad('value, validAfter and validBefore must be uint256 decimal strings');
  if (typeof nonce !== 'string' || !BYTES32.test(nonce)) return bad('payload.nonce must be 32 bytes of hex');
  if (typeof signature !== 'string' || !SIGNATURE_65.test(signature)) return bad('payload.signature must be 65 bytes of hex');
  return parsed({
    type,
    from: getAddress(from),
    to: getAddress(to),
    value,
    validAfter,
    validBefore,
    nonce: nonce.toLowerCase() as Hex,
    signature: signature as Hex,
  });
}

/** The EIP-3009 nonce an `evm` credential must use for this challenge. */
export function challengeNonce(challenge: Pick<Challenge, 'id' | 'realm'>): Hex {
  return keccak256(stringToBytes(`${challenge.id}${challenge.realm}`));
}

/** The payer as a `did:pkh` identifier, the form a credential's `source` takes. */
export function evmSource(chainId: number, address: string): string {
  return `did:pkh:eip155:${chainId}:${getAddress(address)}`;
}
