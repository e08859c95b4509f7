import fc from 'fast-check';
import t from 'tap';
import { type Address, type Hex, recoverTransactionAddress, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { settlerAccount } from '../../../control-plane/facilitator/settler-account.js';

// The settler signs with libsecp256k1 instead of viem's pure JS: the same deterministic signature,
// so byte for byte the same transaction, with the same hash.
const key = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .filter((b) => b.some((x) => x !== 0) && b[0]! < 0xff)
  .map((b) => toHex(b));
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => toHex(b) as Address);
const transaction = fc.record({
  chainId: fc.integer({ min: 1, max: 2 ** 40 }),
  nonce: fc.integer({ min: 0, max: 2 ** 32 }),
  gas: fc.bigInt({ min: 21_000n, max: 2n ** 40n }),
  maxFeePerGas: fc.bigInt({ min: 2n ** 30n, max: 2n ** 60n }),
  maxPriorityFeePerGas: fc.bigInt({ min: 0n, max: 2n ** 30n }),
  to: address,
  data: fc.uint8Array({ maxLength: 300 }).map((b) => toHex(b)),
});

t.test('signs every transaction exactly as viem does', async (t) => {
  await fc.assert(
    fc.asyncProperty(key, transaction, async (privateKey, tx) => {
      const native = await settlerAccount(privateKey as Hex).signTransaction({ type: 'eip1559', ...tx });
      const viem = await privateKeyToAccount(privateKey as Hex).signTransaction({ type: 'eip1559', ...tx });
      t.equal(native, viem);
    }),
    { numRuns: 200 },
  );
  const privateKey = `0x${'4c'.repeat(32)}` as Hex;
  const account = settlerAccount(privateKey);
  const legacyTransaction = { type: 'legacy', chainId: 31337, nonce: 7, gas: 21_000n, gasPrice: 10n, to: account.address } as const;
  const legacy = await account.signTransaction(legacyTransaction);
  t.equal(legacy, await privateKeyToAccount(privateKey).signTransaction(legacyTransaction));
  t.equal(await recoverTransactionAddress({ serializedTransaction: legacy as never }), account.address, 'recovers to the settler');
});
