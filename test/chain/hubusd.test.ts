import { randomBytes } from 'node:crypto';
import t from 'tap';
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createWalletClient,
  type Hex,
  http,
  parseAbi,
  parseSignature,
  serializeSignature,
  toHex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { domainSeparator, eip3009Abi, transferWithAuthorizationTypes } from '../../control-plane/facilitator/transfer-authorization.js';
import { chainReader, startTestChain, tokenBalance } from '../helpers/chain.js';

/** HubUSD's EIP-3009 behaviour, called directly on anvil the way any facilitator would call it. */

t.setTimeout(90_000);

const hubUsdAbi = [
  ...eip3009Abi,
  ...parseAbi([
    'function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
    'function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
    'function mint(address to, uint256 value)',
    'function DOMAIN_SEPARATOR() view returns (bytes32)',
    'error CallerMustBePayee(address caller, address payee)',
    'error AccessControlUnauthorizedAccount(address account, bytes32 neededRole)',
  ]),
] as const;

const receiveTypes = { ReceiveWithAuthorization: transferWithAuthorizationTypes.TransferWithAuthorization } as const;
const cancelTypes = {
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

const chain = await startTestChain(t);
const reader = chainReader(chain);
const [, settlerAccount, payerAccount, payeeAccount] = chain.accounts;
const payer = privateKeyToAccount(payerAccount!.privateKey);
const payee = payeeAccount!.address;
const domain = { name: chain.token.name, version: chain.token.version, chainId: chain.chainId, verifyingContract: chain.token.address };

function walletOf(key: Hex) {
  return createWalletClient({ account: privateKeyToAccount(key), transport: http(chain.rpcUrl), chain: { id: chain.chainId } as never });
}
const settler = walletOf(settlerAccount!.privateKey);

async function authorize(
  overrides: Partial<{ to: Address; value: bigint; validAfter: bigint; validBefore: bigint }> = {},
  primary: 'TransferWithAuthorization' | 'ReceiveWithAuthorization' = 'TransferWithAuthorization',
) {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = {
    from: payer.address,
    to: payee,
    value: 1_000n,
    validAfter: 0n,
    validBefore: now + 60n,
    nonce: toHex(randomBytes(32)),
    ...overrides,
  };
  const signature =
    primary === 'TransferWithAuthorization'
      ? await payer.signTypedData({ domain, types: transferWithAuthorizationTypes, primaryType: primary, message })
      : await payer.signTypedData({ domain, types: receiveTypes, primaryType: primary, message });
  const { v, r, s } = parseSignature(signature);
  const args = [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce] as const;
  return { message, signature, args, vrs: [Number(v), r, s] as const };
}

function nonceUsed(nonce: Hex): Promise<boolean> {
  return reader.readContract({
    address: chain.token.address,
    abi: eip3009Abi,
    functionName: 'authorizationState',
    args: [payer.address, nonce],
  });
}

async function send(wallet: ReturnType<typeof walletOf>, functionName: string, args: readonly unknown[]) {
  const hash = await wallet.writeContract({ address: chain.token.address, abi: hubUsdAbi, functionName, args } as never);
  return reader.waitForTransactionReceipt({ hash });
}

/** The custom error a call reverts with, from a simulation. */
async function revertName(from: Address, functionName: string, args: readonly unknown[]): Promise<string | undefined> {
  try {
    await reader.simulateContract({ address: chain.token.address, abi: hubUsdAbi, functionName, args, account: from } as never);
    return undefined;
  } catch (err) {
    const revert = err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
    return revert instanceof ContractFunctionRevertedError ? (revert.data?.errorName ?? revert.reason) : String(err);
  }
}

t.test('transferWithAuthorization (v, r, s) moves funds once and marks the nonce used', async (t) => {
  const before = await tokenBalance(chain, payee);
  const auth = await authorize();
  t.notOk(await nonceUsed(auth.message.nonce));
  const receipt = await send(settler, 'transferWithAuthorization', [...auth.args, ...auth.vrs]);
  t.equal(receipt.status, 'success');
  t.equal(await tokenBalance(chain, payee), before + 1_000n);
  t.ok(await nonceUsed(auth.message.nonce));
  t.equal(
    await revertName(settler.account.address, 'transferWithAuthorization', [...auth.args, ...auth.vrs]),
    'AuthorizationUsedOrCanceled',
    'a replay reverts',
  );
});

t.test('transferWithAuthorization also takes the signature as bytes, as USDC v2.2 does', async (t) => {
  const before = await tokenBalance(chain, payee);
  const auth = await authorize({ value: 7n });
  const receipt = await send(settler, 'transferWithAuthorization', [...auth.args, auth.signature]);
  t.equal(receipt.status, 'success');
  t.equal(await tokenBalance(chain, payee), before + 7n);
});

t.test('refuses authorizations outside their window, with a wrong signer or a malleable signature', async (t) => {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const from = settler.account.address;
  const expired = await authorize({ validBefore: now - 1n });
  t.equal(await revertName(from, 'transferWithAuthorization', [...expired.args, ...expired.vrs]), 'AuthorizationExpired');
  const early = await authorize({ validAfter: now + 3600n, validBefore: now + 7200n });
  t.equal(await revertName(from, 'transferWithAuthorization', [...early.args, ...early.vrs]), 'AuthorizationNotYetValid');

  const tampered = await authorize();
  const moreValue = [tampered.args[0], tampered.args[1], 2_000n, ...tampered.args.slice(3)] as const;
  t.equal(await revertName(from, 'transferWithAuthorization', [...moreValue, ...tampered.vrs]), 'InvalidSignature');

  // The same signature with s flipped to n - s recovers the same key, but is refused.
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const { r, s, yParity } = parseSignature(tampered.signature);
  const flipped = serializeSignature({ r, s: toHex(n - BigInt(s), { size: 32 }), yParity: yParity === 0 ? 1 : 0 });
  t.equal(await revertName(from, 'transferWithAuthorization', [...tampered.args, flipped]), 'InvalidSignature');

  const tooMuch = await authorize({ value: 10n ** 30n });
  t.equal(await revertName(from, 'transferWithAuthorization', [...tooMuch.args, ...tooMuch.vrs]), 'ERC20InsufficientBalance');
});

t.test('receiveWithAuthorization can only be submitted by the payee', async (t) => {
  const auth = await authorize({}, 'ReceiveWithAuthorization');
  t.equal(await revertName(settler.account.address, 'receiveWithAuthorization', [...auth.args, ...auth.vrs]), 'CallerMustBePayee');
  const before = await tokenBalance(chain, payee);
  const receipt = await send(walletOf(payeeAccount!.privateKey), 'receiveWithAuthorization', [...auth.args, ...auth.vrs]);
  t.equal(receipt.status, 'success');
  t.equal(await tokenBalance(chain, payee), before + 1_000n);

  const asTransfer = await authorize({}, 'ReceiveWithAuthorization');
  t.equal(
    await revertName(settler.account.address, 'transferWithAuthorization', [...asTransfer.args, ...asTransfer.vrs]),
    'InvalidSignature',
    'a receive authorization is not a transfer authorization',
  );
});

t.test('a canceled authorization can no longer be used', async (t) => {
  const auth = await authorize();
  const cancel = parseSignature(
    await payer.signTypedData({
      domain,
      types: cancelTypes,
      primaryType: 'CancelAuthorization',
      message: { authorizer: payer.address, nonce: auth.message.nonce },
    }),
  );
  const receipt = await send(settler, 'cancelAuthorization', [payer.address, auth.message.nonce, Number(cancel.v), cancel.r, cancel.s]);
  t.equal(receipt.status, 'success');
  t.equal(
    await revertName(settler.account.address, 'transferWithAuthorization', [...auth.args, ...auth.vrs]),
    'AuthorizationUsedOrCanceled',
  );
});

t.test('only the minter mints', async (t) => {
  const stranger = privateKeyToAccount(generatePrivateKey()).address;
  t.equal(await revertName(settler.account.address, 'mint', [stranger, 1n]), 'AccessControlUnauthorizedAccount');
  await send(walletOf(chain.deployer.privateKey), 'mint', [stranger, 42n]);
  t.equal(await tokenBalance(chain, stranger), 42n);
});

t.test('its domain separator is the one settlement computes', async (t) => {
  const separator = await reader.readContract({ address: chain.token.address, abi: hubUsdAbi, functionName: 'DOMAIN_SEPARATOR' });
  t.equal(separator, toHex(domainSeparator(domain)));
});
