// A demo agent: calls a pay URL and pays its 402 with the official x402 client, unmodified.
//
//   node --import tsx examples/agent/pay.ts http://weather.pay.localhost:8402/metered
//
// The wallet is AGENT_PRIVATE_KEY, or a funded account of the local chain described in
// $HUB_DATA_DIR/chain.json (default ./data; `npm start` runs one in development, as does
// `hub chain up`). *.localhost names are resolved to this machine.
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { setGlobalDispatcher } from 'undici';
import { privateKeyToAccount } from 'viem/accounts';
import { localhostDispatcher } from '../../runtime/localhost-dispatcher.js';
import { walletKey } from './wallet.js';

const target = process.argv[2];
if (!target) {
  console.error('usage: node --import tsx examples/agent/pay.ts <pay URL>');
  process.exit(2);
}

const wallet = privateKeyToAccount(await walletKey());

if (new URL(target).hostname.endsWith('.localhost')) setGlobalDispatcher(localhostDispatcher());

const client = new x402Client();
registerExactEvmScheme(client, { signer: wallet });
// The dev chain's token is not one the x402 client knows by default: allow it explicitly.
client.setSpendControls({ allowedAssets: true });

const res = await wrapFetchWithPayment(
  fetch,
  client,
)(target).catch((err: Error) => {
  console.error(`could not call ${target}: ${err.message}`);
  process.exit(1);
});
// Paid only when hub says it settled (or will): a 503 or a refused payment moved nothing.
const billing = res.headers.get('hub-billing');
const paid = res.headers.has('payment-response') || /"status":"(settled|settling)"/.test(billing ?? '');
console.log(`${res.status} ${res.statusText}  (${paid ? `paid from ${wallet.address}` : `nothing paid; wallet ${wallet.address}`})`);
for (const name of ['hub-billing', 'hub-usage-error', 'hub-usage-adjusted']) {
  const value = res.headers.get(name);
  if (value) console.log(`${name}: ${value}`);
}
const receipt = res.headers.get('payment-response');
if (receipt) console.log(`payment-response: ${Buffer.from(receipt, 'base64').toString('utf8')}`);
console.log(await res.text());
