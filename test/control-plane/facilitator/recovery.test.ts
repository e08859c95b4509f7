import fc from 'fast-check';
import t from 'tap';
import { type Address, type Hex, hashTypedData, parseSignature, serializeSignature, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  createRecoverPool,
  defaultRecoverer,
  defaultSignerRecovery,
  inlineSignerRecovery,
  loadRecoverer,
  recoverAuthorizationSigner,
  type SignedAuthorization,
} from '../../../control-plane/facilitator/signer-recovery.js';
import {
  type Eip712Domain,
  parseRecoverableSignature,
  type TransferAuthorization,
  transferAuthorizationDigest,
  transferWithAuthorizationTypes,
} from '../../../control-plane/facilitator/transfer-authorization.js';

t.setTimeout(60_000);

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => toHex(b) as Address);
const uint256 = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });
const domainArb = fc.record({
  name: fc.string({ maxLength: 40 }),
  version: fc.string({ maxLength: 8 }),
  chainId: fc.integer({ min: 1, max: 2 ** 40 }),
  verifyingContract: address,
});
const authorizationArb = fc.record({
  from: address,
  to: address,
  value: uint256,
  validAfter: uint256,
  validBefore: uint256,
  nonce: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => toHex(b)),
});

async function signed(overrides: Partial<TransferAuthorization> = {}): Promise<SignedAuthorization & { signer: Address }> {
  const account = privateKeyToAccount(generatePrivateKey());
  const domain: Eip712Domain = {
    name: 'Hub USD',
    version: '1',
    chainId: 31337,
    verifyingContract: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  };
  const authorization: TransferAuthorization = {
    from: account.address,
    to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    value: 10_000n,
    validAfter: 0n,
    validBefore: 2_000_000_000n,
    nonce: toHex(crypto.getRandomValues(new Uint8Array(32))),
    ...overrides,
  };
  const signature = await account.signTypedData({
    domain,
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  return { domain, authorization, signature, signer: account.address };
}

t.test('the hand-written digest is viem’s EIP-712 hash for any domain and authorization', async (t) => {
  const outOfRange = { ...(await signed()).authorization, value: 2n ** 256n };
  fc.assert(
    fc.property(domainArb, authorizationArb, (domain, authorization) => {
      const expected = hashTypedData({
        domain,
        types: transferWithAuthorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message: authorization,
      });
      return toHex(transferAuthorizationDigest(domain, authorization)) === expected;
    }),
    { numRuns: 200 },
  );
  const { domain } = await signed();
  t.throws(() => transferAuthorizationDigest(domain, outOfRange), RangeError);
});

t.test('signatures are split as the token wants them, and refused where the token refuses them', async (t) => {
  const { signature } = await signed();
  const parsed = parseRecoverableSignature(signature)!;
  const { r, s, v } = parseSignature(signature);
  t.same({ r: parsed.r, s: parsed.s, v: parsed.v }, { r, s, v: Number(v) });
  t.equal(parsed.compact.length, 64);

  const body = signature.slice(0, 130);
  t.equal(parseRecoverableSignature(`${body}00` as Hex)?.v, 27, 'v = 0 means 27');
  t.equal(parseRecoverableSignature(`${body}01` as Hex)?.v, 28, 'v = 1 means 28');
  for (const bad of [`${body}1d`, `${body}02`, signature.slice(0, 128), `${signature}00`, 'not hex']) {
    t.equal(parseRecoverableSignature(bad as Hex), undefined, `refuses ${bad.slice(-6)}`);
  }
  const high = serializeSignature({ r, s: toHex(N - BigInt(s), { size: 32 }), yParity: parsed.recoveryId === 0 ? 1 : 0 });
  t.equal(parseRecoverableSignature(high), undefined, 'refuses high-s (malleable) signatures');
  t.equal(parseRecoverableSignature(`0x${'00'.repeat(32)}${s.slice(2)}1b`), undefined, 'refuses r = 0');
});

t.test('native and viem recovery agree, and native is the default here', async (t) => {
  const native = await loadRecoverer('native');
  const viem = await loadRecoverer('viem');
  t.equal((await defaultRecoverer()).name, 'native-secp256k1');
  for (let i = 0; i < 5; i++) {
    const item = await signed();
    t.equal(await recoverAuthorizationSigner(item, native), item.signer.toLowerCase());
    t.equal(await recoverAuthorizationSigner(item, viem), item.signer.toLowerCase());
  }
  const item = await signed();
  const tampered = { ...item, authorization: { ...item.authorization, value: item.authorization.value + 1n } };
  t.not(await recoverAuthorizationSigner(tampered, native), item.signer.toLowerCase(), 'a tampered authorization recovers someone else');
  t.equal(await recoverAuthorizationSigner({ ...item, signature: '0x1234' }, native), undefined);
  t.equal((await defaultSignerRecovery()).name, 'inline:native-secp256k1', 'native recovery runs inline by default');
});

t.test('the worker pool recovers the same signers, with either backend', async (t) => {
  const items = await Promise.all(Array.from({ length: 6 }, () => signed()));
  for (const backend of ['native', 'viem'] as const) {
    const pool = createRecoverPool({ threads: 1, backend });
    t.teardown(() => pool.close());
    const recovered = await Promise.all(items.map((item) => pool.recoverSigner(item)));
    t.same(
      recovered,
      items.map((item) => item.signer.toLowerCase()),
      `${backend} in a worker`,
    );
    t.equal(await pool.recoverSigner({ ...items[0]!, signature: '0x00' }), undefined);
  }
  const inline = await inlineSignerRecovery();
  t.equal(await inline.recoverSigner(items[0]!), items[0]!.signer.toLowerCase());
});
