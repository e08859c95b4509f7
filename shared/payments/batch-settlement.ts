import type { Address } from 'viem';

/**
 * x402's `batch-settlement` scheme on EVM, as hub speaks it: the scheme's name, the addresses its
 * contracts are deployed at on every chain (the scheme's specification names them; x402's client
 * signs channel ids and vouchers for the first and deposits to the second), and its EIP-712 domain.
 * test/shared/payments/batch-settlement.test.ts holds them equal to x402's own package.
 */
export const BATCH_SETTLEMENT_SCHEME = 'batch-settlement';

export const BATCH_SETTLEMENT_CONTRACT: Address = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';
export const ERC3009_DEPOSIT_COLLECTOR: Address = '0x4020806089470a89826cB9fB1f4059150b550004';

export const BATCH_SETTLEMENT_DOMAIN = { name: 'x402 Batch Settlement', version: '1' } as const;

/** The bounds the contract puts on a channel's withdrawal delay, in seconds. */
export const MIN_WITHDRAW_DELAY = 15 * 60;
export const MAX_WITHDRAW_DELAY = 30 * 24 * 3600;
