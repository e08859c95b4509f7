import t from 'tap';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { testProviders } from '../../helpers/database.js';
import { startTestHub } from '../../helpers/hub.js';
import { sellerBehind, startTestUpstream } from '../../helpers/upstream.js';

for (const provider of testProviders()) {
  t.test(`agent registration on ${provider}`, async (t) => {
    const hub = await startTestHub(t, provider);
    const upstream = await startTestUpstream(t);
    await sellerBehind(hub, upstream);
    const wallet = privateKeyToAccount(generatePrivateKey());
    const post = (path: string, body: unknown) =>
      hub.pay('acme', path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

    const challengeRes = await post('/agents/challenge', { walletAddress: wallet.address });
    t.equal(challengeRes.status, 200);
    t.equal(challengeRes.headers.get('cache-control'), 'no-store');
    const challenge = (await challengeRes.json()) as { challengeId: string; message: string; expiresAt: string };
    t.match(challenge.challengeId, /^regc_/);
    t.match(challenge.message, new RegExp(wallet.address.toLowerCase()));

    const stranger = privateKeyToAccount(generatePrivateKey());
    const forged = await post('/agents/register', {
      challengeId: challenge.challengeId,
      signature: await stranger.signMessage({ message: challenge.message }),
    });
    t.equal(forged.status, 401, 'another wallet’s signature is refused');
    t.match(await forged.json(), { error: 'bearer_required', reason: 'invalid_signature' });

    const signature = await wallet.signMessage({ message: challenge.message });
    const registered = await post('/agents/register', { challengeId: challenge.challengeId, signature });
    t.equal(registered.status, 200);
    const agent = (await registered.json()) as { agentId: string; token: string; buyerId: string | null };
    t.match(agent, { agentId: /^agt_/, token: /^hubagt_/, buyerId: null });

    const replay = await post('/agents/register', { challengeId: challenge.challengeId, signature });
    t.match(await replay.json(), { error: 'bearer_required', reason: 'challenge_used' }, 'a challenge is single-use');

    const call = await hub.pay('acme', '/echo', { headers: { authorization: `Bearer ${agent.token}` } });
    t.equal(call.status, 200);
    t.equal(upstream.seen.at(-1)!.headers['hub-agent-id'], agent.agentId, 'the token identifies the agent');
    const stored = await hub.cp.db.agent.findUnique({ where: { id: agent.agentId } });
    t.equal(stored?.walletAddress, wallet.address.toLowerCase());
    t.not(stored?.tokenHash, agent.token, 'only the hash is stored');

    // Registering again issues a new token and revokes the old one.
    const again = (await (await post('/agents/challenge', { walletAddress: wallet.address })).json()) as {
      challengeId: string;
      message: string;
    };
    const second = (await (
      await post('/agents/register', { challengeId: again.challengeId, signature: await wallet.signMessage({ message: again.message }) })
    ).json()) as { agentId: string; token: string };
    t.equal(second.agentId, agent.agentId, 'same wallet, same agent');
    t.not(second.token, agent.token);

    await t.test('malformed registration bodies are 400 with a readable message', async (t) => {
      for (const [path, body] of [
        ['/agents/challenge', { walletAddress: 'nope' }],
        ['/agents/challenge', { walletAddress: wallet.address, extra: 1 }],
        ['/agents/register', { challengeId: 'regc_x', signature: '0x00' }],
      ] as const) {
        const res = await post(path, body);
        t.equal(res.status, 400, `${path} ${JSON.stringify(body)}`);
        t.match(await res.json(), { error: 'invalid_request', reason: /must|Unrecognized|unrecognized/ });
      }
      const json = { 'content-type': 'application/json' };
      const notJson = await hub.pay('acme', '/agents/challenge', { method: 'POST', body: '{', headers: json });
      t.same(await notJson.json(), { error: 'invalid_request', reason: 'The request body is not valid JSON' });
      const plainText = await hub.pay('acme', '/agents/challenge', {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'text/plain' },
      });
      t.equal(plainText.status, 415, 'JSON bodies only, as on /v1');
      const wrongMethod = await hub.pay('acme', '/agents/challenge');
      t.equal(wrongMethod.status, 405);
      const unknown = await post('/agents/register', { challengeId: `regc_${'a'.repeat(24)}`, signature: signature });
      t.match(await unknown.json(), { error: 'bearer_required', reason: 'unknown_challenge' });
    });
  });
}
