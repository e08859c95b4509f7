import { type Address, isAddress, isAddressEqual } from 'viem';
// Types only, erased at run time: `signed` must be exactly what settlement's signer recovery takes.
import type { Eip712Domain, SignedAuthorization, TransferAuthorization } from '../eip3009.js';
import { type Challenge, isChallengeExpired, verifyChallengeId } from './challenge.js';
import type { Credential } from './credential.js';
import { failed, type Parsed, parsed } from './encoding.js';
import {
  CHARGE_INTENT,
  challengeNonce,
  EVM_METHOD,
  type EvmAuthorizationPayload,
  type EvmChargeRequest,
  parseEvmAuthorizationPayload,
  parseEvmChargeRequest,
} from './evm-charge.js';
import { paymentIdOf } from './opaque.js';

/**
 * Everything about an `evm` charge credential that needs neither the chain nor signature
 * recovery: that hub issued the challenge (HMAC), for this realm, still unexpired, and that the
 * authorization pays the requested amount to the requested payee under the challenge's nonce.
 * The caller then recovers the signer from `signed`, or hands `toExactPayment(…)` to a
 * facilitator, which recovers it and checks the chain.
 *
 * The checks run cheapest first, and the challenge id before anything read from the echo: once
 * it verifies, every echoed field (amount, token, payee, chain, payment id) is hub's own.
 */

export const evmChargeFailureReasons = {
  unknown_challenge: 'The challenge was not issued by this server, or was altered.',
  wrong_realm: 'The challenge was issued for another host.',
  challenge_expired: 'The challenge has expired; ask for a fresh one.',
  unsupported_method: 'Only the evm charge method is accepted.',
  missing_payment_id: 'The challenge carries no payment id.',
  invalid_request: 'The challenge request is not an evm charge request.',
  invalid_payload: 'The credential payload is not an EIP-3009 authorization.',
  challenge_mismatch: 'The authorization nonce does not belong to this challenge.',
  wrong_payee: 'The authorization pays someone other than the payee.',
  amount_mismatch: 'The authorized amount differs from the price.',
  authorization_not_yet_valid: 'The authorization is not valid yet.',
  authorization_expired: 'The authorization has expired.',
  source_mismatch: 'The credential source is not the payer.',
} as const;

export type EvmChargeFailure = keyof typeof evmChargeFailureReasons;

export type VerifiedEvmCharge = {
  /** hub's payment attempt (`apay_…`), from the challenge's opaque. */
  paymentId: string;
  challenge: Challenge;
  request: EvmChargeRequest;
  payload: EvmAuthorizationPayload;
  /** Claimed by the payload; proven only once the signature recovers to it. */
  payer: Address;
  /** For `SignerRecovery.recoverSigner(signed)`: who signed this authorization. */
  signed: SignedAuthorization;
};

export type VerifyOptions = {
  /** The secret challenge ids are keyed with. */
  secret: string;
  /** When given, the challenge must have been issued for this realm (the pay host). */
  realm?: string;
  /** Unix milliseconds; defaults to now. */
  nowMs?: number;
};

export function verifyEvmCharge(credential: Credential, options: VerifyOptions): Parsed<VerifiedEvmCharge, EvmChargeFailure> {
  const fail = (reason: EvmChargeFailure, detail: string = evmChargeFailureReasons[reason]) => failed(reason, detail);
  const { challenge } = credential;
  const nowMs = options.nowMs ?? Date.now();

  if (!verifyChallengeId(challenge, options.secret)) return fail('unknown_challenge');
  if (options.realm !== undefined && challenge.realm !== options.realm) return fail('wrong_realm');
  if (isChallengeExpired(challenge, nowMs)) return fail('challenge_expired');
  if (challenge.method !== EVM_METHOD || challenge.intent !== CHARGE_INTENT) return fail('unsupported_method');
  const paymentId = paymentIdOf(challenge);
  if (paymentId === undefined) return fail('missing_payment_id');
  const request = parseEvmChargeRequest(challenge.request);
  if (!request.ok) return fail('invalid_request', request.detail);
  const payload = parseEvmAuthorizationPayload(credential.payload);
  if (!payload.ok) return fail('invalid_payload', payload.detail);

  const p = payload.value;
  const r = request.value;
  if (p.nonce !== challengeNonce(challenge)) return fail('challenge_mismatch');
  if (!isAddressEqual(p.to, r.recipient)) return fail('wrong_payee');
  if (p.value !== r.amount) return fail('amount_mismatch');
  // The token contract accepts validAfter < block time < validBefore.
  const nowSeconds = BigInt(Math.floor(nowMs / 1000));
  if (BigInt(p.validAfter) >= nowSeconds) return fail('authorization_not_yet_valid');
  if (BigInt(p.validBefore) <= nowSeconds) return fail('authorization_expired');
  if (credential.source !== undefined && !sameSource(credential.source, r.methodDetails.chainId, p.from)) return fail('source_mismatch');

  const authorization: TransferAuthorization = {
    from: p.from,
    to: p.to,
    value: BigInt(p.value),
    validAfter: BigInt(p.validAfter),
    validBefore: BigInt(p.validBefore),
    nonce: p.nonce,
  };
  const domain: Eip712Domain = {
    name: r.methodDetails.authorization.name,
    version: r.methodDetails.authorization.version,
    chainId: r.methodDetails.chainId,
    verifyingContract: r.currency,
  };
  return parsed({ paymentId, challenge, request: r, payload: p, payer: p.from, signed: { domain, authorization, signature: p.signature } });
}

/** `did:pkh:eip155:<chainId>:<address>`, the address compared without regard to case. */
function sameSource(source: string, chainId: number, payer: Address): boolean {
  const prefix = `did:pkh:eip155:${chainId}:`;
  const address = source.slice(prefix.length);
  return source.startsWith(prefix) && isAddress(address, { strict: false }) && isAddressEqual(address, payer);
}
