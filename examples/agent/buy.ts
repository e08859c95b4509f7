// A demo agent buying a plan at a pay URL with the official x402 client, unmodified: POST /extend
// answers 402 with the price, the client pays, and the paid retry opens the account.
//
//   AGENT_TOKEN=hubagt_… node --import tsx examples/agent/buy.ts http://weather.pay.localhost:8402 pln_… [amountUsd]
//
// AGENT_TOKEN is the agent's bearer token (examples/agent/register.ts prints one). With
// ACCESS_ID set, renews or tops up that account instead. The wallet is as for pay.ts.
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { setGlobalDispatcher } from 'undici';
import { privateKeyToAccount } from 'viem/accounts';
import { localhostDispatcher } from '../../runtime/localhost-dispatcher.js';
import { walletKey } from './wallet.js';

const [payUrl, planId, amountUsd] = process.argv.slice(2);
const token = process.env.AGENT_TOKEN;
if (!payUrl || !planId || !token) {
  console.error('usage: AGENT_TOKEN=hubagt_… node --import tsx examples/agent/buy.ts <pay URL> <planId> [amountUsd]');
  process.exit(2);
}
if (new URL(payUrl).hostname.endsWith('.localhost')) setGlobalDispatcher(localhostDispatcher());

const wallet = privateKeyToAccount(await walletKey());
const client = new x402Client();
registerExactEvmScheme(client, { signer: wallet });
client.setSpendControls({ allowedAssets: true });

const accessId = process.env.ACCESS_ID;
const target = `${payUrl.replace(/\/+$/, '')}/extend${accessId ? `?accessId=${encodeURIComponent(accessId)}` : ''}`;
const res = await wrapFetchWithPayment(fetch, client)(target, {
  method: 'POST',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  body: JSON.stringify(accessId ? { ...(amountUsd ? { amountUsd } : {}) } : { planId, ...(amountUsd ? { amountUsd } : {}) }),
}).catch((err: Error) => {
  console.error(`could not buy at ${target}: ${err.message}`);
  process.exit(1);
});
type Purchase = {
  error?: string;
  reason?: string;
  account: {
    accessId: string;
    status: string;
    plan: { slug: string };
    balanceUsd: string | null;
    period: { start: string; end: string | null };
    topUpUrl: string;
  };
  payment: { amountUsd: string; holdTransactionHash: string | null } | null;
};
const answer = (await res.json().catch(() => ({}))) as Purchase;
if (res.status !== 201) {
  console.log(`${res.status} ${res.statusText}  ${answer.error ?? ''} ${answer.reason ?? ''}`.trimEnd());
  process.exit(1);
}
const { account, payment } = answer;
console.log(`${res.status} ${res.statusText}  (${payment ? `paid ${payment.amountUsd} USD from ${wallet.address}` : 'free'})`);
console.log(
  `account ${account.accessId} (${account.plan.slug}, ${account.status}): balance ${account.balanceUsd ?? '-'} USD, period ${account.period.start} → ${account.period.end ?? 'open'}`,
);
// A stateful seller's purchase waits in the escrow until the seller has the account.
if (payment?.holdTransactionHash) console.log(`held in the escrow until the seller has the account: ${payment.holdTransactionHash}`);
console.log(`top up or renew: ${account.topUpUrl}`);
