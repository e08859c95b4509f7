import { randomBytes } from 'node:crypto';
import { type Address, type Hex, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { LocalChain } from '../../chain/local-chain.js';
import type { Db } from '../../control-plane/db/client.js';
import { type Eip712Domain, transferWithAuthorizationTypes } from '../../control-plane/facilitator/transfer-authorization.js';
import { claimPaidRequest } from '../../control-plane/payments/claim.js';
import type { PaymentRail } from '../../control-plane/payments/rail.js';
import type { PaymentPayload, PaymentRequirements } from '../../shared/payments/x402-wire.js';
import { sha256Hex } from '../../shared/signature.js';

/** Builders for x402 v2 exact-EVM payments on a test chain. */

export function requirementsFor(chain: LocalChain, payTo: Address, overrides: Partial<PaymentRequirements> = {}): PaymentRequirements {
  return {
    scheme: 'exact',
    network: chain.network,
    asset: chain.token.address,
    amount: '10000',
    payTo,
    maxTimeoutSeconds: 60,
    extra: { name: chain.token.name, version: chain.token.version },
    ...overrides,
  };
}

export function domainOf(chain: LocalChain): Eip712Domain {
  return { name: chain.token.name, version: chain.token.version, chainId: chain.chainId, verifyingContract: chain.token.address };
}

export type AuthorizationFields = { to: Address; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex };

/**
 * A payment signed with viem's `signTypedData`, as a wallet would sign it. `authorization`
 * overrides what is signed; `tamper` then changes the payload after signing.
 */
export async function signPayment(
  chain: LocalChain,
  payerKey: Hex,
  requirements: PaymentRequirements,
  options: {
    authorization?: Partial<AuthorizationFields>;
    domain?: Partial<Eip712Domain>;
    tamper?: Partial<Record<keyof AuthorizationFields, string>>;
  } = {},
): Promise<PaymentPayload> {
  const payer = privateKeyToAccount(payerKey);
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = {
    from: payer.address,
    to: requirements.payTo as Address,
    value: BigInt(requirements.amount),
    validAfter: 0n,
    validBefore: now + 60n,
    nonce: toHex(randomBytes(32)),
    ...options.authorization,
  };
  const signature = await payer.signTypedData({
    domain: { ...domainOf(chain), ...options.domain },
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  const authorization = {
    from: message.from,
    to: message.to,
    value: message.value.toString(),
    validAfter: message.validAfter.toString(),
    validBefore: message.validBefore.toString(),
    nonce: message.nonce,
    ...options.tamper,
  };
  return { x402Version: 2, accepted: requirements, payload: { signature, authorization } };
}

/**
 * Signs a payment for `requirements` and admits it for the request it was asked for, as the
 * proxy does with a paid retry before forwarding it (the control-plane's claim); the payment id.
 */
export async function admitPaidRetry(
  db: Db,
  rail: PaymentRail,
  chain: LocalChain,
  payerKey: Hex,
  requirements: PaymentRequirements,
  request: { sellerId: string; method: string; pathAndQuery: string; body: string },
): Promise<string> {
  const paymentId = requirements.extra.paymentId as string;
  await claimPaidRequest(
    db,
    { live: rail },
    {
      paymentId,
      sellerId: request.sellerId,
      method: request.method,
      pathAndQuery: request.pathAndQuery,
      bodyDigest: sha256Hex(Buffer.from(request.body)),
      protocol: 'x402',
      payload: await signPayment(chain, payerKey, requirements),
    },
  );
  return paymentId;
}
