import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/** `fetch` that pays x402 challenges as an agent does: the unmodified official client, signing with `payerKey`. */
export function x402Fetch(payerKey: Hex, base: typeof fetch = fetch): typeof fetch {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(payerKey) });
  client.setSpendControls({ allowedAssets: true });
  return wrapFetchWithPayment(base, client);
}
