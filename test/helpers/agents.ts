import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { TestHub } from './hub.js';

/** An agent registered through the pay URL, as an agent does it: challenge, EIP-191 signature, token. */
export async function registerAgent(hub: Pick<TestHub, 'pay'>, slug: string, privateKey: Hex = generatePrivateKey()) {
  const wallet = privateKeyToAccount(privateKey);
  const post = async (path: string, body: unknown) => {
    const res = await hub.pay(slug, path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    return res.json() as Promise<Record<string, string>>;
  };
  const challenge = await post('/agents/challenge', { walletAddress: wallet.address });
  const registered = await post('/agents/register', {
    challengeId: challenge.challengeId,
    signature: await wallet.signMessage({ message: challenge.message! }),
  });
  return { agentId: registered.agentId!, token: registered.token!, walletAddress: wallet.address.toLowerCase() };
}
