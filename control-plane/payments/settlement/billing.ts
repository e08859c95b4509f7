import type { BillingSummary } from '../../../shared/contract.js';
import { formatUsd } from '../../../shared/money.js';

/** The billing summary of a settled or settling payment, amounts as six-decimal strings. */
export function billingSummary(
  status: 'settled' | 'settling',
  authorized: bigint,
  charged: bigint,
  remainderHandling: BillingSummary['remainderHandling'],
  tx: string | null,
): BillingSummary {
  return {
    status,
    authorizedUsd: formatUsd(authorized),
    chargedUsd: formatUsd(charged),
    remainderUsd: formatUsd(authorized - charged),
    remainderHandling,
    settleTransactionHash: tx,
  };
}
