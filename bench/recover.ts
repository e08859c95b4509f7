/**
 * How fast hub recovers the signer of an x402 payment (an EIP-3009 TransferWithAuthorization):
 * native libsecp256k1 against viem's pure JS, inline and through the Piscina pool, with the
 * EIP-712 hashing measured on its own. Prints ops/s per variant and the native/viem ratio.
 *
 *   node --import tsx bench/recover.ts [--seconds 1] [--threads 2]
 *
 * Each variant runs for `--seconds` (default 1), so the whole run is bounded (~12 × that, plus
 * pool start-up).
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { type Address, hashTypedData, recoverTypedDataAddress, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  createRecoverPool,
  loadRecoverer,
  type Recoverer,
  recoverAuthorizationSigner,
  type SignedAuthorization,
  type SignerRecovery,
} from '../control-plane/facilitator/signer-recovery.js';
import {
  type Eip712Domain,
  parseRecoverableSignature,
  transferAuthorizationDigest,
  transferWithAuthorizationTypes,
} from '../control-plane/facilitator/transfer-authorization.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '1' }, threads: { type: 'string', default: '2' } } });
const seconds = Math.min(Math.max(Number(values.seconds) || 1, 0.1), 30);
const threads = Math.min(Math.max(Number(values.threads) || 2, 1), 16);

const domain: Eip712Domain = {
  name: 'Hub USD',
  version: '1',
  chainId: 31337,
  verifyingContract: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
};

async function corpus(size: number): Promise<{ input: SignedAuthorization; signer: Address }[]> {
  return Promise.all(
    Array.from({ length: size }, async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      const now = BigInt(Math.floor(Date.now() / 1000));
      const authorization = {
        from: account.address,
        to: privateKeyToAccount(generatePrivateKey()).address,
        value: 10_000n,
        validAfter: 0n,
        validBefore: now + 60n,
        nonce: toHex(randomBytes(32)),
      };
      const signature = await account.signTypedData({
        domain,
        types: transferWithAuthorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message: authorization,
      });
      return { input: { domain, authorization, signature }, signer: account.address };
    }),
  );
}

/** Runs `op` back to back (or `concurrency` at a time) for the configured time; returns ops/s. */
async function measure(op: (i: number) => unknown, concurrency = 1): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      for (let i = lane; performance.now() < deadline; i += concurrency) {
        await op(i);
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

function row(name: string, opsPerSecond: number): void {
  console.log(
    `${name.padEnd(48)} ${Math.round(opsPerSecond).toString().padStart(9)} ops/s  ${(1e6 / opsPerSecond).toFixed(1).padStart(8)} µs/op`,
  );
}

async function check(
  recovery: (input: SignedAuthorization) => Promise<Address | undefined>,
  items: Awaited<ReturnType<typeof corpus>>,
  name: string,
) {
  for (const { input, signer } of items.slice(0, 8)) {
    if ((await recovery(input))?.toLowerCase() !== signer.toLowerCase()) throw new Error(`${name} recovered the wrong signer`);
  }
}

const items = await corpus(64);
const at = (i: number) => items[i % items.length]!;
const digests = items.map(({ input }) => transferAuthorizationDigest(input.domain, input.authorization));
const signatures = items.map(({ input }) => parseRecoverableSignature(input.signature)!);

let native: Recoverer | undefined;
try {
  native = await loadRecoverer('native');
} catch (err) {
  console.log(`native secp256k1 binding did not load: ${(err as Error).message.split('\n')[0]}`);
}
const viem = await loadRecoverer('viem');

console.log(`signer recovery, ${seconds} s per variant, node ${process.version}, ${threads} pool threads\n`);
console.log('EIP-712 digest of TransferWithAuthorization');
row('  hand-written (transfer-authorization.ts)', await measure((i) => transferAuthorizationDigest(domain, at(i).input.authorization)));
row(
  '  viem hashTypedData',
  await measure((i) =>
    hashTypedData({
      domain,
      types: transferWithAuthorizationTypes,
      primaryType: 'TransferWithAuthorization',
      message: at(i).input.authorization,
    }),
  ),
);

console.log('ecrecover of a ready digest');
const rawNative = native ? await measure((i) => native.recoverAddress(digests[i % 64]!, signatures[i % 64]!)) : 0;
if (native) row('  native secp256k1', rawNative);
const rawViem = await measure((i) => viem.recoverAddress(digests[i % 64]!, signatures[i % 64]!));
row('  viem', rawViem);

console.log('digest + recovery, inline');
let fullNative = 0;
if (native) {
  await check((input) => recoverAuthorizationSigner(input, native), items, 'native');
  fullNative = await measure((i) => recoverAuthorizationSigner(at(i).input, native));
  row('  native secp256k1', fullNative);
}
await check((input) => recoverAuthorizationSigner(input, viem), items, 'viem');
const fullViem = await measure((i) => recoverAuthorizationSigner(at(i).input, viem));
row('  viem', fullViem);
row(
  '  viem recoverTypedDataAddress (generic path)',
  await measure((i) => {
    const { input } = at(i);
    return recoverTypedDataAddress({
      domain,
      types: transferWithAuthorizationTypes,
      primaryType: 'TransferWithAuthorization',
      message: input.authorization,
      signature: input.signature,
    });
  }),
);

console.log(`digest + recovery, Piscina pool of ${threads}, ${threads * 16} in flight`);
for (const backend of native ? (['native', 'viem'] as const) : (['viem'] as const)) {
  const pool: SignerRecovery = createRecoverPool({ threads, backend });
  try {
    await check((input) => pool.recoverSigner(input), items, `pool ${backend}`);
    row(`  ${backend}`, await measure((i) => pool.recoverSigner(at(i).input), threads * 16));
    const single = await measure((i) => pool.recoverSigner(at(i).input));
    row(`  ${backend}, one at a time (round-trip latency)`, single);
  } finally {
    await pool.close();
  }
}

if (native) {
  console.log(
    `\nnative / viem: ${(rawNative / rawViem).toFixed(1)}× for ecrecover alone, ${(fullNative / fullViem).toFixed(1)}× with the digest`,
  );
}
