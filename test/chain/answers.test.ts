import t from 'tap';
import { whyChainDoesNotAnswer } from '../../chain/answers.js';
import { startTestChain } from '../helpers/chain.js';
import { freePort } from '../helpers/processes.js';

t.setTimeout(90_000);

t.test('a chain description answers only when its RPC is that chain with the token deployed', async (t) => {
  const chain = await startTestChain(t, { accounts: 2 });
  t.equal(await whyChainDoesNotAnswer(chain), undefined, 'the chain it describes');
  t.equal(
    await whyChainDoesNotAnswer({ ...chain, chainId: chain.chainId + 1 }),
    `${chain.rpcUrl} is chain ${chain.chainId}, not ${chain.chainId + 1}`,
    'another chain on that port',
  );
  const elsewhere = { ...chain.token, address: chain.settler.address };
  t.equal(
    await whyChainDoesNotAnswer({ ...chain, token: elsewhere }),
    `no token contract at ${elsewhere.address} on ${chain.rpcUrl}`,
    'a chain without the token (a fresh anvil on the old port)',
  );
  const dead = `http://127.0.0.1:${await freePort()}`;
  t.match(await whyChainDoesNotAnswer({ ...chain, rpcUrl: dead }), `${dead} does not answer (`, 'nothing on the port');
});
