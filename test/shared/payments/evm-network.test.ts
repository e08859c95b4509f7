import t from 'tap';
import { chainIdOf, evmChainIdOf } from '../../../shared/payments/evm-network.js';

t.test('a CAIP-2 EVM network’s chain id, read one way everywhere', async (t) => {
  t.equal(chainIdOf('eip155:8453'), 8453);
  t.equal(chainIdOf('eip155:1'), 1);
  for (const other of [
    'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
    'eip155:',
    'eip155:0x1',
    'eip155:01',
    'eip155:1:2',
    'eip155:99999999999999999999',
    ' eip155:1',
  ])
    t.equal(chainIdOf(other), undefined, `${JSON.stringify(other)} has none`);
  t.equal(evmChainIdOf('eip155:31337'), 31337);
  t.throws(() => evmChainIdOf('solana:mainnet'), /not an EVM network: solana:mainnet/);
});
