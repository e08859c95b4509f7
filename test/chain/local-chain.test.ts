import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { type AbiFunction, toFunctionSignature } from 'viem';
import { compileContract } from '../../chain/compile.js';
import { deploymentFromJson, deploymentToJson } from '../../chain/deployment.js';
import { escrowAbi } from '../../control-plane/facilitator/escrow.js';
import { eip3009Abi } from '../../control-plane/facilitator/transfer-authorization.js';
import { alive, chainReader, chainWallet, startTestChain, tokenBalance } from '../helpers/chain.js';

t.setTimeout(90_000);

t.test('a local chain runs anvil on loopback with HubUSD deployed and every account funded', async (t) => {
  const chain = await startTestChain(t, { accounts: 3, fundMicros: 5_000_000n });
  t.match(chain.rpcUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.equal(chain.network, `eip155:${chain.chainId}`);
  t.equal(chain.deployer.address, chain.accounts[0]!.address);
  t.equal(chain.settler.address, chain.accounts[1]!.address);

  const reader = chainReader(chain);
  const read = <N extends 'name' | 'version' | 'decimals'>(functionName: N) =>
    reader.readContract({ address: chain.token.address, abi: eip3009Abi, functionName });
  t.equal(await read('name'), chain.token.name);
  t.equal(await read('version'), chain.token.version);
  t.equal(await read('decimals'), 6);
  t.equal(chain.token.decimals, 6);
  t.equal(await reader.getChainId(), chain.chainId);
  t.equal(
    await reader.readContract({ address: chain.escrow!, abi: escrowAbi, functionName: 'operator' }),
    chain.settler.address,
    'the escrow is operated by the settler',
  );
  for (const account of chain.accounts) {
    t.equal(await tokenBalance(chain, account.address), 5_000_000n, `${account.address} holds $5`);
    t.equal(account.tokenUnits, 5_000_000n);
  }

  // Cancun rules: no EIP-2935 history contract, whose ever-growing storage makes anvil's every
  // new block cost more than the last (bench:payments' long run shows the rate kept).
  t.equal(await reader.getCode({ address: '0x0000F90827F1C53a10cb7A02335B175320002935' }), undefined, 'no block-hash history contract');

  t.ok(alive(chain.pid));
  await chain.stop();
  await chain.exited;
  t.notOk(alive(chain.pid), 'stop() ends the anvil process');
  await chain.stop();
});

t.test('the settlement ABI matches what the compiler produced for HubUSD', async (t) => {
  const artifact = await compileContract('HubUSD', { cacheDir: join(tmpdir(), 'hub-contracts') });
  const compiled = new Set(artifact.abi.filter((item) => item.type !== 'constructor').map((item) => signature(item)));
  for (const item of eip3009Abi) t.ok(compiled.has(signature(item)), `HubUSD has ${signature(item)}`);
  t.match(artifact.bytecode, /^0x[0-9a-f]+$/);
});

t.test('the escrow ABI matches HubEscrow as compiled; nobody but the operator may settle through it', async (t) => {
  const artifact = await compileContract('HubEscrow', { cacheDir: join(tmpdir(), 'hub-contracts') });
  const compiled = new Set(artifact.abi.filter((item) => item.type !== 'constructor').map((item) => signature(item)));
  for (const item of escrowAbi.filter((i) => i.type === 'function' || i.type === 'event'))
    t.ok(compiled.has(signature(item)), signature(item));

  const chain = await startTestChain(t, { accounts: 3 });
  const stranger = chainWallet(chain, chain.accounts[2]!.privateKey);
  const authorization = {
    from: chain.accounts[2]!.address,
    value: 1n,
    validAfter: 0n,
    validBefore: 2n ** 40n,
    nonce: `0x${'11'.repeat(32)}` as const,
  };
  const refused = stranger.writeContract({
    address: chain.escrow!,
    abi: escrowAbi,
    functionName: 'settle',
    args: [
      chain.token.address,
      authorization,
      { v: 27, r: `0x${'22'.repeat(32)}`, s: `0x${'33'.repeat(32)}` },
      stranger.account.address,
      1n,
      true,
    ],
  });
  await t.rejects(refused, /NotOperator/);
});

t.test('a deployment description survives JSON with its bigints', async (t) => {
  const deployment = {
    chainId: 31337,
    network: 'eip155:31337' as const,
    rpcUrl: 'http://127.0.0.1:8545',
    token: { address: '0x5FbDB2315678afecb367f032d93F642f64180aa3' as const, name: 'Hub USD', symbol: 'HUSD', version: '1', decimals: 6 },
    deployer: { address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' as const, privateKey: '0x01' as const },
    settler: { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const, privateKey: '0x02' as const },
    accounts: [{ address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' as const, privateKey: '0x01' as const, tokenUnits: 2n ** 70n }],
  };
  const json = JSON.parse(JSON.stringify(deploymentToJson(deployment)));
  t.match(json.note, /public knowledge/);
  t.equal(json.accounts[0].tokenUnits, (2n ** 70n).toString());
  t.same(deploymentFromJson(json), deployment);
});

t.test('refuses a chain too small to have a deployer and a settler', async (t) => {
  const { startLocalChain } = await import('../../chain/local-chain.js');
  await t.rejects(startLocalChain({ accounts: 1 }), RangeError);
});

function signature(item: (typeof eip3009Abi)[number] | { type: string; name?: string; inputs?: readonly { type: string }[] }): string {
  if (item.type === 'function') return toFunctionSignature(item as AbiFunction);
  return `${item.type} ${'name' in item ? item.name : ''}(${('inputs' in item ? (item.inputs ?? []) : []).map((i) => i.type).join(',')})`;
}
