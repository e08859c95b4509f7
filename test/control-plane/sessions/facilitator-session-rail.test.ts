import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { type Hex, keccak256, parseAbi, recoverAddress, recoverTypedDataAddress, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { compileContract } from '../../../chain/compile.js';
import { chainRecoverable, contractSigned, signedAsOnChain } from '../../../control-plane/facilitator/contract-signature.js';
import { FacilitatorUnavailableError } from '../../../control-plane/facilitator/facilitator.js';
import type { HttpFacilitator } from '../../../control-plane/facilitator/http-facilitator.js';
import { remoteRail } from '../../../control-plane/payments/rail.js';
import { batchSettlementDomain, type ChannelConfig, channelIdOf } from '../../../control-plane/sessions/channel-digests.js';
import { SessionSendUnknownError, schemeListed } from '../../../control-plane/sessions/facilitator-session-rail.js';
import { claimBatchTypes, type SessionRail } from '../../../control-plane/sessions/session-rail.js';
import { ApiError } from '../../../shared/errors.js';
import { chainReader, chainWallet, startTestChain } from '../../helpers/chain.js';
import { type Answer, remoteSessionsSettings, startFacilitatorServer } from '../../helpers/facilitator-server.js';
import { freePort } from '../../helpers/processes.js';

// How a remote facilitator's answers to the scheme's payloads end in hub (docs/decisions.md#D-340):
// mined only by a receipt the chain shows, refused only when nothing can have been sent, and not
// known (to be followed from the chain) whenever the facilitator may have acted without saying how.

t.setTimeout(60_000);

const chain = await startTestChain(t);
const authorizerKey = chain.accounts[5]!.privateKey as Hex;
const authorizer = privateKeyToAccount(authorizerKey).address;
let answer: Answer = { status: 200, body: {} };
const asked: { route: string; body: any }[] = [];
const facilitatorUrl = await startFacilitatorServer(t, (route, body) => {
  asked.push({ route, body });
  if (route === 'supported') return { status: 200, body: { kinds: [{ x402Version: 2, scheme: 'exact', network: chain.network }] } };
  return answer;
});

function sessionsAt(url: string, rpcUrl = chain.rpcUrl): SessionRail {
  const rail = remoteRail(remoteSessionsSettings(chain, url, rpcUrl), 'live');
  t.teardown(() => (rail.facilitator as HttpFacilitator).close());
  return rail.sessions!;
}
const sessions = sessionsAt(facilitatorUrl);

const payer = chain.accounts[3]!.address as Hex;
const config: ChannelConfig = {
  payer,
  payerAuthorizer: payer,
  receiver: chain.accounts[2]!.address as Hex,
  receiverAuthorizer: authorizer,
  token: chain.token.address as Hex,
  withdrawDelay: 86_400,
  salt: `0x${'00'.repeat(31)}01`,
};
const claim = { config, maxClaimableAmount: 30_000n, signature: `0x${'ab'.repeat(65)}` as Hex, totalClaimed: 20_000n };
const settleAnswer = (fields: Record<string, unknown>): Answer => ({
  status: 200,
  body: { success: false, transaction: '', network: chain.network, ...fields },
});
const HASH = `0x${'12'.repeat(32)}`;

t.test('a claim is the scheme’s payload, signed by hub as receiver authorizer', async (t) => {
  answer = settleAnswer({ errorReason: 'invalid_batch_settlement_evm_claim_simulation_failed' });
  t.match(await sessions.claim([claim]), { status: 'refused', message: /claim_simulation_failed/ });
  const { body } = asked.at(-1)!;
  t.match(body.paymentRequirements, {
    scheme: 'batch-settlement',
    network: chain.network,
    payTo: config.receiver,
    extra: { receiverAuthorizer: authorizer, withdrawDelay: 86_400 },
  });
  t.match(body.paymentPayload.payload, {
    type: 'claim',
    claims: [{ voucher: { channel: { payer, salt: config.salt }, maxClaimableAmount: '30000' }, totalClaimed: '20000' }],
  });
  const chainId = Number(chain.network.split(':')[1]);
  const signer = await recoverTypedDataAddress({
    domain: batchSettlementDomain(chainId),
    types: claimBatchTypes,
    primaryType: 'ClaimBatch',
    message: { claims: [{ channelId: channelIdOf(config, chainId), maxClaimableAmount: 30_000n, totalClaimed: 20_000n }] },
    signature: body.paymentPayload.payload.claimAuthorizerSignature,
  });
  t.equal(signer, authorizer);
});

t.test('how the facilitator’s answers end', async (t) => {
  const wallet = chainWallet(chain, chain.accounts[4]!.privateKey as Hex);
  const mined = await wallet.writeContract({
    address: chain.token.address as Hex,
    abi: parseAbi(['function transfer(address to, uint256 value) returns (bool)']),
    functionName: 'transfer',
    args: [chain.accounts[2]!.address as Hex, 1n],
  });
  await chainReader(chain).waitForTransactionReceipt({ hash: mined });

  answer = { status: 200, body: { success: true, transaction: mined, network: chain.network } };
  t.match(
    await sessions.settle(config.receiver, config.token),
    { status: 'mined', transaction: mined, receipt: { status: 'success' } },
    'a settle of a receiver with nothing claimed: settled up to it',
  );
  // The hash of a successful transaction that did something else: what was asked is not on chain, so
  // not mined, but followed from the chain by its record (docs/decisions.md#D-355).
  t.match(await sessions.claim([claim]), { status: 'unknown', transaction: mined }, 'a claim the channel does not show');
  t.match(
    await sessions.refund({ config, amount: 5_000n, nonce: 0n }),
    { status: 'unknown', transaction: mined },
    'a refund whose nonce did not move',
  );
  const authorization = { validAfter: '0', validBefore: '99999999999', salt: config.salt, signature: `0x${'cd'.repeat(65)}` as Hex };
  t.match(
    await sessions.deposit(config, 50_000n, authorization, { maxClaimableAmount: 10_000n, signature: `0x${'ef'.repeat(65)}` }),
    { status: 'unknown', transaction: mined },
    'a deposit whose authorization is not used',
  );
  answer = { status: 200, body: { success: true, transaction: HASH, network: chain.network } };
  t.match(await sessions.settle(config.receiver, config.token), { status: 'unknown', transaction: HASH }, 'no receipt on chain');
  answer = settleAnswer({ errorReason: 'settlement_pending', transaction: HASH });
  t.match(await sessions.claim([claim]), { status: 'unknown', transaction: HASH });
  answer = settleAnswer({ errorReason: 'invalid_batch_settlement_evm_claim_transaction_failed', transaction: HASH });
  t.match(await sessions.claim([claim]), { status: 'reverted', transaction: HASH });
  answer = { status: 404, body: 'no such route', raw: true };
  t.match(await sessions.claim([claim]), { status: 'refused', message: /404/ }, 'a 4xx that is not a settle answer');
  answer = { status: 503, body: 'down', raw: true };
  await t.rejects(sessions.claim([claim]), SessionSendUnknownError, 'a 5xx may have sent it');
  await t.rejects(sessionsAt(`http://127.0.0.1:${await freePort()}`).claim([claim]), FacilitatorUnavailableError, 'never reached');
});

t.test('a refund brings hub’s signatures; a deposit the facilitator does not answer is 503', async (t) => {
  answer = settleAnswer({ errorReason: 'invalid_batch_settlement_evm_refund_simulation_failed' });
  t.match(await sessions.refund({ config, amount: 5_000n, nonce: 2n }), { status: 'refused' });
  t.match(asked.at(-1)!.body.paymentPayload.payload, {
    type: 'refund',
    amount: '5000',
    refundNonce: '2',
    claims: [],
    refundAuthorizerSignature: /^0x[0-9a-f]{130}$/,
  });
  t.notOk('claimAuthorizerSignature' in asked.at(-1)!.body.paymentPayload.payload, 'no claim: no claim signature');

  answer = { status: 502, body: 'bad gateway', raw: true };
  const deposit = sessions.deposit(
    config,
    50_000n,
    { validAfter: '0', validBefore: '99999999999', salt: config.salt, signature: `0x${'cd'.repeat(65)}` },
    { maxClaimableAmount: 10_000n, signature: `0x${'ef'.repeat(65)}` },
  );
  const err = await deposit.then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof ApiError);
  t.match(err, { status: 503, code: 'service_unavailable', message: /facilitator did not take the deposit.*502/ });
  t.match(asked.at(-1)!.body.paymentPayload.payload, {
    type: 'deposit',
    voucher: { channelId: channelIdOf(config, Number(chain.network.split(':')[1])), maxClaimableAmount: '10000' },
    deposit: { amount: '50000', authorization: { erc3009Authorization: { salt: config.salt } } },
  });
});

t.test('sessions are offered while the facilitator’s /supported lists the scheme on the network (D-361)', async (t) => {
  t.equal(await sessions.offered!(), false, 'a facilitator listing exact alone: not offered');

  type Kinds = Awaited<ReturnType<HttpFacilitator['supported']>>['kinds'];
  const sessionsKind = { x402Version: 2, scheme: 'batch-settlement', network: chain.network as `${string}:${string}` };
  let kinds: Kinds = [];
  let fails = false;
  let calls = 0;
  let gate: Promise<void> | undefined;
  /** The answer being given now, for the test to wait on. */
  let answering: Promise<unknown> = Promise.resolve();
  const facilitator = {
    supported: () => {
      calls++;
      const answer = (async () => {
        await gate;
        if (fails) throw new Error('no answer');
        return { kinds, extensions: [], signers: {} };
      })();
      answering = answer.catch(() => undefined);
      return answer;
    },
  };

  // Asked once however many ask at once; the first answer is waited for.
  kinds = [sessionsKind];
  const listed = schemeListed(facilitator, chain.network, 60_000);
  t.same(await Promise.all([listed(), listed(), listed()]), [true, true, true]);
  t.equal(calls, 1, 'one /supported for three asks');
  kinds = [];
  t.equal(await listed(), true, 'an answer stands for its time');
  t.equal(calls, 1);

  // Past its time, the last answer is given while a fresh one is asked; the next ask has the fresh one.
  const quick = schemeListed(facilitator, chain.network, 0);
  kinds = [sessionsKind];
  t.equal(await quick(), true);
  kinds = [{ ...sessionsKind, network: 'eip155:1' }];
  let open: () => void = () => {};
  gate = new Promise((resolve) => (open = resolve));
  t.equal(await quick(), true, 'the last answer while the fresh one is asked');
  open();
  gate = undefined;
  await answering;
  t.equal(await quick(), false, 'another network’s kind does not count');
  await answering;

  // A facilitator that does not answer keeps the last answer; with none yet, sessions are not offered.
  kinds = [sessionsKind];
  t.equal(await quick(), false, 'the last answer');
  await answering;
  t.equal(await quick(), true, 'then the fresh one');
  await answering;
  fails = true;
  t.equal(await quick(), true);
  await answering;
  t.equal(await quick(), true, 'no answer: the last one stands');
  t.equal(await schemeListed(facilitator, chain.network)(), false, 'no answer ever: not offered');
  const hanging = { supported: () => new Promise<never>(() => {}) };
  t.equal(await schemeListed(hanging, chain.network)(), false, 'a facilitator that hangs holds the 402 up two seconds at most');
});

t.test('a signature judged as the chain judges it, through the remote rail’s reads (D-362)', async (t) => {
  const ownerKey = chain.accounts[4]!.privateKey as Hex;
  const owner = privateKeyToAccount(ownerKey);
  const sourcesDir = fileURLToPath(new URL('../../contracts', import.meta.url));
  const cacheDir = join(tmpdir(), 'hub-contracts');
  const reader = chainReader(chain);
  const deploy = async (name: string, args: unknown[]) => {
    const { abi, bytecode } = await compileContract(name, { sourcesDir, cacheDir });
    const hash = await chainWallet(chain, ownerKey).deployContract({ abi, bytecode, args } as never);
    return (await reader.waitForTransactionReceipt({ hash })).contractAddress as Hex;
  };
  const wallet = await deploy('OwnedWallet', [owner.address]);
  const shortAnswer = await deploy('ShortAnswerWallet', []);
  const digest = keccak256(toHex('a voucher'));
  const byOwner = await owner.sign({ hash: digest });
  const byStranger = await privateKeyToAccount(chain.accounts[5]!.privateKey as Hex).sign({ hash: digest });
  const reads = sessions.signatureReads;
  const recovered = (signature: Hex) => async () => (await recoverAddress({ hash: digest, signature })).toLowerCase();
  const judged = (signer: Hex, signature: Hex) => signedAsOnChain(reads, signer, digest, signature, recovered(signature));

  t.equal(await contractSigned(reads, wallet, digest, byOwner), true, 'the wallet takes its owner’s signature');
  t.equal(await contractSigned(reads, wallet, digest, byStranger), false, 'not another key’s');
  t.equal(await contractSigned(reads, owner.address, digest, byOwner), false, 'an account with no code takes nothing');
  t.equal(await contractSigned(reads, chain.token.address as Hex, digest, byOwner), false, 'a contract with no such function refuses');
  t.equal(await contractSigned(reads, shortAnswer, digest, byOwner), false, 'a four-byte answer is no answer');

  t.equal(await judged(wallet, byOwner), true, 'with code: by ERC-1271');
  t.equal(await judged(owner.address, byOwner), true, 'without code: by its key');
  t.equal(await judged(owner.address, byStranger), false);
  // v as 0 or 1: recovered off chain, not by the chain's ecrecover.
  const lowV = `${byOwner.slice(0, 130)}${(Number.parseInt(byOwner.slice(130), 16) - 27).toString(16).padStart(2, '0')}` as Hex;
  t.equal(await recovered(lowV)(), owner.address.toLowerCase(), 'off chain, v 0/1 still recovers the key');
  t.equal(chainRecoverable(lowV), false);
  t.equal(await judged(owner.address, lowV), false, 'but the chain would not take it');

  await t.rejects(
    contractSigned(sessionsAt(facilitatorUrl, `http://127.0.0.1:${await freePort()}`).signatureReads, wallet, digest, byOwner),
    FacilitatorUnavailableError,
    'a chain that does not answer cannot say',
  );
});
