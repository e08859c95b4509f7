import { z } from 'zod';
import { ATTEMPT_STATUSES, type AttemptStatus } from '../payments/attempt-statuses.js';
import { timestamp } from './fields.js';

const usd = z.string().meta({ description: 'USD, six decimals' });

/** The value sets analytics reports (docs/decisions.md › Analytics). */
export const TRANSACTION_KINDS = ['call', 'purchase', 'renewal', 'topup'] as const;
/** A payment attempt's statuses but `delivered`: an identity-only payment moves no money and is no transaction. */
export const TRANSACTION_STATUSES = ATTEMPT_STATUSES.filter((status) => status !== 'delivered') as [
  Exclude<AttemptStatus, 'delivered'>,
  ...Exclude<AttemptStatus, 'delivered'>[],
];
export const PAYMENT_METHODS = ['x402_wallet', 'x402_session', 'mpp_wallet', 'credit'] as const;

/** A payment attempt as the seller's analytics lists it (spec: Transaction). */
export const transaction = z.object({
  id: z.string().meta({ description: 'The payment attempt (apay_…)' }),
  kind: z.enum(TRANSACTION_KINDS).meta({ description: 'call: a per-call payment; purchase, renewal, topup: a plan bought at /extend' }),
  status: z.enum(TRANSACTION_STATUSES),
  paymentMethod: z.enum(PAYMENT_METHODS).meta({
    description:
      'x402_wallet: x402 exact on an EVM chain; x402_session: a voucher on an x402 batch-settlement channel; mpp_wallet: the MPP Payment scheme on the same rail; credit: the payer’s credit with the seller. x402_wallet while unpaid',
  }),
  amountUsd: usd.meta({ description: 'What was charged once settled; the price asked before' }),
  network: z.string().meta({ description: 'CAIP-2 chain id' }),
  protocol: z
    .enum(['x402', 'mpp', 'credit'])
    .meta({ description: 'The protocol the agent paid with (credit: none, its credit paid); x402 while unpaid' }),
  createdAt: timestamp,
  verifiedAt: timestamp.nullable().meta({ description: 'When the payment was verified; null while unpaid' }),
  seller: z.object({ id: z.string(), name: z.string(), slug: z.string() }),
  service: z.object({ id: z.string(), name: z.string(), slug: z.string() }).nullable(),
  plan: z.object({ id: z.string(), name: z.string() }).nullable(),
  agent: z.object({ id: z.string(), walletAddress: z.string() }).nullable(),
});

/** The seller analytics record (spec: Seller analytics record); every figure is defined in docs/decisions.md › Analytics. */
export const sellerAnalytics = z.object({
  days: z.int(),
  calls: z.int().meta({ description: 'Requests the seller answered that hub delivered to the caller (challenges excluded)' }),
  transactions: z.int().meta({ description: 'Payment attempts of the period whose payment reached the seller' }),
  revenueUsd: usd.meta({ description: 'What those transactions charged' }),
  newWallets: z.int().meta({ description: 'Wallets whose first transaction with the seller is in the period' }),
  attempts: z.int().meta({ description: 'Priced payment challenges issued in the period' }),
  successRate: z.number().meta({ description: 'transactions / attempts, 0 to 1 in four decimals; 0 without attempts' }),
  recentTransactions: z.array(transaction).meta({ description: 'The 20 newest payment attempts of the period, newest first' }),
  sessionRevenue: z
    .object({
      chargedUsd: usd.meta({ description: 'What calls paid with a session’s vouchers charged in the period (part of revenueUsd)' }),
      unclaimedUsd: usd.meta({ description: 'Of it, not claimed on chain yet: held by the payer’s voucher only' }),
      claimedUsd: usd.meta({ description: 'Claimed on chain (the seller’s in the channel contract), not sent to the seller’s wallet yet' }),
      settledUsd: usd.meta({ description: 'Sent to the seller’s wallet' }),
    })
    .meta({
      description: 'Voucher charges (x402 batch-settlement) split by how far their money has moved: the three parts add up to chargedUsd',
    }),
});

/** Payers' credit with a seller (hub's own route beside the spec's record). */
export const creditAnalytics = z.object({
  days: z.int(),
  timeZone: z.string(),
  outstandingUsd: usd.meta({ description: 'Credit payers hold with the seller now: received, and still owed in calls' }),
  payers: z.int().meta({ description: 'Payers holding credit now' }),
  creditedUsd: usd.meta({ description: 'Remainders credited in the period' }),
  drawnUsd: usd.meta({ description: 'Credit spent by calls in the period (a draw returned when its call failed is not counted)' }),
});

const counted = z.object({ value: z.string(), views: z.int() });

/** Page-view analytics of a seller (hub's own route beside the spec's record). */
export const pageViewAnalytics = z.object({
  days: z.int(),
  timeZone: z.string(),
  views: z.int(),
  byClass: z.object({ human: z.int(), agent: z.int(), crawler: z.int(), unknown: z.int() }),
  acceptsMarkdown: z.int().meta({ description: 'Views whose viewer accepts text/markdown' }),
  perDay: z.array(
    z.object({
      date: z.string().meta({ description: 'YYYY-MM-DD in the time zone asked for' }),
      views: z.int(),
      human: z.int(),
      agent: z.int(),
      crawler: z.int(),
      unknown: z.int(),
    }),
  ),
  topPaths: z.array(counted).meta({ description: 'The 20 most viewed paths' }),
  countries: z.array(counted).meta({ description: 'The 20 countries most views came from' }),
  referrers: z.array(counted).meta({ description: 'The 20 referrer hosts most views came from' }),
});
