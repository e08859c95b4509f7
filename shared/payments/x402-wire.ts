import { z } from 'zod';

/**
 * x402 v2 wire shapes (what `@x402/core` and remote facilitators send), parsed with zod because
 * they arrive from agents and from other servers. Objects are loose: fields a newer x402 adds
 * pass through untouched.
 */

/** CAIP-2 network id, e.g. `eip155:8453`: the same template type as x402's `Network`. */
const network = z.templateLiteral([z.string().min(1), ':', z.string().min(1)]);
export type Network = z.infer<typeof network>;

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 20-byte hex address');
const bytes32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be 32 bytes of hex');
const hexBytes = z.string().regex(/^0x(?:[0-9a-fA-F]{2})+$/, 'must be hex bytes');
/** A uint256 as a decimal string without sign or leading zeros, as x402 writes amounts and times. */
const UINT256 = /^(?:0|[1-9][0-9]{0,77})$/;
// One check, not regex-then-refine: zod runs every check even after one fails, and BigInt() throws.
const uint256 = z.string().refine((s) => UINT256.test(s) && BigInt(s) < 2n ** 256n, 'must be a uint256 decimal string');

export const resourceInfoSchema = z.looseObject({
  url: z.string(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
});

export const paymentRequirementsSchema = z.looseObject({
  scheme: z.string(),
  network,
  /** Token contract address for EVM networks. */
  asset: z.string(),
  /** Atomic token units. */
  amount: uint256,
  payTo: z.string(),
  maxTimeoutSeconds: z.number().int().nonnegative(),
  /** For exact-EVM: the token's EIP-712 domain `{ name, version }`. */
  extra: z.record(z.string(), z.unknown()),
});
export type PaymentRequirements = z.infer<typeof paymentRequirementsSchema>;

export const paymentPayloadSchema = z.looseObject({
  x402Version: z.number().int(),
  resource: resourceInfoSchema.optional(),
  /** The requirements the client chose from the 402's `accepts`. */
  accepted: paymentRequirementsSchema,
  payload: z.record(z.string(), z.unknown()),
  extensions: z.record(z.string(), z.unknown()).optional(),
});
export type PaymentPayload = z.infer<typeof paymentPayloadSchema>;

/** `payload` of an exact-EVM payment: an EIP-3009 authorization and the payer's signature over it. */
export const exactEvmPayloadSchema = z.looseObject({
  signature: hexBytes,
  authorization: z.looseObject({
    from: address,
    to: address,
    value: uint256,
    validAfter: uint256,
    validBefore: uint256,
    nonce: bytes32,
  }),
});
export type ExactEvmPayload = z.infer<typeof exactEvmPayloadSchema>;

/** A uint128 (the batch-settlement contract's amounts) as a decimal string. */
const uint128 = z.string().refine((s) => UINT256.test(s) && BigInt(s) < 2n ** 128n, 'must be a uint128 decimal string');

/** A batch-settlement channel's immutable config: its EIP-712 hash is the channel's id. */
export const channelConfigSchema = z.looseObject({
  payer: address,
  payerAuthorizer: address,
  receiver: address,
  receiverAuthorizer: address,
  token: address,
  withdrawDelay: z
    .number()
    .int()
    .nonnegative()
    .max(2 ** 40 - 1),
  salt: bytes32,
});

/** A payer's cumulative voucher: the channel may be claimed up to `maxClaimableAmount` in all. */
const voucherSchema = z.looseObject({ channelId: bytes32, maxClaimableAmount: uint128, signature: hexBytes });

/**
 * `payload` of a batch-settlement payment: a voucher alone, or a deposit into the channel (an
 * ERC-3009 `receiveWithAuthorization` to the scheme's collector) with the voucher it pays for; or
 * the payer's cooperative refund: its voucher at what was charged, and the `amount` to return (all
 * that is not charged when absent), checked where it is taken so a bad one gets the scheme's code.
 */
export const sessionPayloadSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('voucher'), channelConfig: channelConfigSchema, voucher: voucherSchema }),
  z.looseObject({
    type: z.literal('deposit'),
    channelConfig: channelConfigSchema,
    voucher: voucherSchema,
    deposit: z.looseObject({
      amount: uint128.refine((s) => s !== '0', 'must be positive'),
      authorization: z.looseObject({
        erc3009Authorization: z.looseObject({ validAfter: uint256, validBefore: uint256, salt: bytes32, signature: hexBytes }),
      }),
    }),
  }),
  z.looseObject({ type: z.literal('refund'), channelConfig: channelConfigSchema, voucher: voucherSchema, amount: z.unknown().optional() }),
]);
export type SessionPayload = z.infer<typeof sessionPayloadSchema>;

export const verifyResponseSchema = z.looseObject({
  isValid: z.boolean(),
  invalidReason: z.string().optional(),
  invalidMessage: z.string().optional(),
  payer: z.string().optional(),
});
export type VerifyResponse = z.infer<typeof verifyResponseSchema>;

export const settleResponseSchema = z.looseObject({
  success: z.boolean(),
  errorReason: z.string().optional(),
  errorMessage: z.string().optional(),
  payer: z.string().optional(),
  /** Transaction hash; empty when nothing was submitted. */
  transaction: z.string(),
  network,
  amount: z.string().optional(),
});
export type SettleResponse = z.infer<typeof settleResponseSchema>;

export const supportedResponseSchema = z.looseObject({
  kinds: z.array(
    z.looseObject({
      x402Version: z.number().int(),
      scheme: z.string(),
      network,
      extra: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
  extensions: z.array(z.string()).default([]),
  /** CAIP-2 pattern (`eip155:*`) → addresses that submit settlements. */
  signers: z.record(z.string(), z.array(z.string())).default({}),
});
export type SupportedResponse = z.infer<typeof supportedResponseSchema>;

/** Body of `POST /verify` and `POST /settle`. */
export type FacilitatorRequest = {
  x402Version: number;
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
};
