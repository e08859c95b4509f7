// A demo agent registering at a pay URL, as any agent does: ask for a challenge for its wallet,
// sign it (EIP-191), and keep the bearer token it gets back. Prints the token.
//
//   node --import tsx examples/agent/register.ts http://weather.pay.localhost:8402
//
// The wallet is AGENT_PRIVATE_KEY, or a new one. *.localhost names are resolved to this machine.
import { setGlobalDispatcher } from 'undici';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { localhostDispatcher } from '../../runtime/localhost-dispatcher.js';

const payUrl = process.argv[2]?.replace(/\/+$/, '');
if (!payUrl) {
  console.error('usage: node --import tsx examples/agent/register.ts <pay URL>');
  process.exit(2);
}
if (new URL(payUrl).hostname.endsWith('.localhost')) setGlobalDispatcher(localhostDispatcher());

const wallet = privateKeyToAccount((process.env.AGENT_PRIVATE_KEY as Hex | undefined) ?? generatePrivateKey());

async function post(path: string, body: unknown): Promise<Record<string, string>> {
  const res = await fetch(`${payUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).catch((err: Error) => {
    console.error(`could not reach ${payUrl}: ${err.message}`);
    process.exit(1);
  });
  const answer = (await res.json().catch(() => ({}))) as Record<string, string>;
  if (!res.ok) {
    console.error(`${path}: ${res.status} ${answer.error ?? ''} ${answer.reason ?? ''}`.trim());
    process.exit(1);
  }
  return answer;
}

const challenge = await post('/agents/challenge', { walletAddress: wallet.address });
const signature = await wallet.signMessage({ message: challenge.message! });
const registered = await post('/agents/register', { challengeId: challenge.challengeId, signature });
console.error(`registered ${registered.agentId} for wallet ${wallet.address}`);
console.log(registered.token);
