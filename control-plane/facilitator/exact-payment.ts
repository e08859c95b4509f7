import { type Address, getAddress, type Hex, isAddressEqual } from 'viem';
import {
  exactEvmPayloadSchema,
  type PaymentRequirements,
  paymentPayloadSchema,
  paymentRequirementsSchema,
} from '../../shared/payments/x402-wire.js';
import type { VerifyFailureReason } from './results.js';
import { type VerifyResult, verifyFailure } from './results.js';
import type { Eip712Domain, TransferAuthorization } from './transfer-authorization.js';

/**
 * An x402 v2 exact-EVM payment taken apart, and the checks on it that need no chain and no
 * signature recovery: the cheap ones, run first.
 */

export type ExactPayment = {
  requirements: PaymentRequirements;
  authorization: TransferAuthorization;
  signature: Hex;
  payer: Address;
};

/** A token a facilitator settles in: its address and EIP-712 domain on the facilitator's chain. */
export type SettlementToken = { address: Address; name: string; version: string };

type Failure = VerifyResult & { isValid: false };

export function parseExactPayment(paymentPayload: unknown, paymentRequirements: unknown): { payment: ExactPayment } | { failure: Failure } {
  const payload = paymentPayloadSchema.safeParse(paymentPayload);
  const requirements = paymentRequirementsSchema.safeParse(paymentRequirements);
  if (!payload.success)
    return { failure: verifyFailure('invalid_payload', undefined, `paymentPayload: ${payload.error.issues[0]?.message}`) };
  if (!requirements.success)
    return { failure: verifyFailure('invalid_payload', undefined, `paymentRequirements: ${requirements.error.issues[0]?.message}`) };
  if (payload.data.x402Version !== 2)
    return { failure: verifyFailure('invalid_payload', undefined, 'Only x402 version 2 payloads are accepted here.') };
  if (payload.data.accepted.scheme !== 'exact' || requirements.data.scheme !== 'exact')
    return { failure: verifyFailure('unsupported_scheme') };

  const exact = exactEvmPayloadSchema.safeParse(payload.data.payload);
  if (!exact.success) return { failure: verifyFailure('invalid_payload', undefined, `payload: ${exact.error.issues[0]?.message}`) };
  const a = exact.data.authorization;
  const authorization: TransferAuthorization = {
    from: getAddress(a.from),
    to: getAddress(a.to),
    value: BigInt(a.value),
    validAfter: BigInt(a.validAfter),
    validBefore: BigInt(a.validBefore),
    nonce: a.nonce as Hex,
  };
  // Whatever the client claims to have accepted, the authorization is checked against the
  // server's own requirements; `accepted` only has to agree on where the money goes.
  const accepted = payload.data.accepted;
  const payment = { requirements: requirements.data, authorization, signature: exact.data.signature as Hex, payer: authorization.from };
  if (accepted.network !== requirements.data.network) return { failure: verifyFailure('wrong_network', payment.payer) };
  if (!sameAddress(accepted.asset, requirements.data.asset)) return { failure: verifyFailure('wrong_asset', payment.payer) };
  return { payment };
}

/** Network, asset, payee and amount; returns the token on success. */
export function checkTerms(
  payment: ExactPayment,
  facilitator: { network: string; tokens: readonly SettlementToken[] },
): { token: SettlementToken } | { failure: Failure } {
  const { requirements, authorization, payer } = payment;
  if (requirements.network !== facilitator.network) return { failure: verifyFailure('wrong_network', payer) };
  const token = facilitator.tokens.find((t) => sameAddress(t.address, requirements.asset));
  if (!token) return { failure: verifyFailure('wrong_asset', payer) };
  if (!sameAddress(authorization.to, requirements.payTo)) return { failure: verifyFailure('wrong_payee', payer) };
  if (authorization.value !== BigInt(requirements.amount)) return { failure: verifyFailure('amount_mismatch', payer) };
  return { token };
}

/**
 * The contract accepts `validAfter < block.timestamp < validBefore`. The upper bound keeps a margin
 * so that a transfer sent now is mined before the authorization lapses.
 */
export function windowFailure(
  authorization: TransferAuthorization,
  nowSeconds: bigint,
  marginSeconds: bigint,
): VerifyFailureReason | undefined {
  if (authorization.validAfter >= nowSeconds) return 'authorization_not_yet_valid';
  if (authorization.validBefore <= nowSeconds + marginSeconds) return 'authorization_expired';
  return undefined;
}

export function tokenDomain(token: SettlementToken, chainId: number): Eip712Domain {
  return { name: token.name, version: token.version, chainId, verifyingContract: token.address };
}

function sameAddress(a: string, b: string): boolean {
  try {
    return isAddressEqual(a as Address, b as Address);
  } catch {
    return false;
  }
}
