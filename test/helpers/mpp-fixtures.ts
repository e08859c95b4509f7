import { evm } from 'mppx/client';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { newId } from '../../shared/ids.js';
import {
  bodyDigest,
  type Challenge,
  type ChallengeFields,
  type EvmToken,
  evmChargeRequest,
  expiresAfter,
  paymentIdOpaque,
  signChallenge,
} from '../../shared/payments/mpp/index.js';

/** Builders shared by the MPP tests: hub's side issues challenges, mppx's side pays them. */

export const SECRET = 'mpp-test-secret';
export const REALM = 'acme.pay.localhost';
export const CHAIN_ID = 31337;
export const TOKEN: EvmToken = { address: '0x5FbDB2315678afecb367f032d93F642f64180aa3', decimals: 6, name: 'Hub USD', version: '1' };
export const PAYEE: Address = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

export type Issued = { challenge: Challenge; paymentId: string };

/** A charge challenge as the proxy would issue it: $0.01 for a body, five minutes to pay. */
export function issueChallenge(
  options: {
    priceMicros?: bigint;
    body?: string;
    token?: EvmToken;
    chainId?: number;
    payee?: string;
    nowMs?: number;
    secret?: string;
  } & Partial<ChallengeFields> = {},
): Issued {
  const {
    priceMicros = 10_000n,
    body = '{"q":1}',
    token = TOKEN,
    chainId = CHAIN_ID,
    payee = PAYEE,
    nowMs,
    secret = SECRET,
    ...fields
  } = options;
  const paymentId = newId('paymentAttempt');
  const challenge = signChallenge(
    {
      realm: REALM,
      method: 'evm',
      intent: 'charge',
      request: evmChargeRequest({ priceMicros, chainId, token, recipient: payee }),
      expires: expiresAfter(300, nowMs),
      digest: bodyDigest(body),
      opaque: paymentIdOpaque(paymentId),
      ...fields,
    },
    secret,
  );
  return { challenge, paymentId };
}

export function newPayer(): { key: Hex; address: Address } {
  const key = generatePrivateKey();
  return { key, address: privateKeyToAccount(key).address };
}

/**
 * The `Authorization` value the official mppx EVM charge method creates for `challenge`, called
 * directly (no HTTP): what an agent running mppx would send.
 */
export async function mppxCredential(challenge: Challenge, payerKey: Hex, token: EvmToken = TOKEN): Promise<string> {
  const method = evm.charge({ account: privateKeyToAccount(payerKey), authorization: { name: token.name, version: token.version } });
  return method.createCredential({ challenge: challenge as never, context: undefined as never });
}
