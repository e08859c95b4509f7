import type { IncomingMessage, ServerResponse } from 'node:http';
import { Receipt as MppxReceipt } from 'mppx';
import { evm, Mppx } from 'mppx/client';
import t from 'tap';
import { privateKeyToAccount } from 'viem/accounts';
import { inlineSignerRecovery } from '../../../../control-plane/facilitator/signer-recovery.js';
import {
  type CredentialCarrier,
  challengeNonce,
  createReceipt,
  digestMatches,
  expiresAfter,
  readCredential,
  serializeChallenge,
  serializeReceipt,
  toExactPayment,
  verifyEvmCharge,
} from '../../../../shared/payments/mpp/index.js';
import { chainReader, startTestChain, tokenBalance } from '../../../helpers/chain.js';
import { localFacilitatorFor } from '../../../helpers/local-facilitator.js';
import { serveOnLoopback } from '../../../helpers/loopback-server.js';
import { issueChallenge, SECRET } from '../../../helpers/mpp-fixtures.js';

/**
 * The official mppx 0.11 client, unmodified, pays a node:http server that speaks MPP through hub's
 * module only: challenge out, credential in, challenge id and nonce checked, signer recovered by
 * control-plane/settlement, the authorization settled on a real chain by hub's LocalFacilitator,
 * and a receipt the client's own parser accepts.
 */

t.setTimeout(120_000);

const chain = await startTestChain(t);
const facilitator = localFacilitatorFor(t, chain);
const recovery = await inlineSignerRecovery();
const payerKey = chain.accounts[2]!.privateKey;
const payer = chain.accounts[2]!.address;
const payee = chain.accounts[3]!.address;
const PRICE_MICROS = 12_500n;

/** What the server saw, request by request. */
type Seen = {
  path: string;
  headers: IncomingMessage['headers'];
  status: number;
  carrier?: CredentialCarrier;
  paymentId?: string;
  signer?: string;
  nonce?: string;
  expectedNonce?: string;
  transaction?: string;
};
const seen: Seen[] = [];
/** Payment attempts, as the proxy's table would hold them. */
const attempts = new Map<string, { completed: boolean }>();

function challengeFor(req: IncomingMessage, body: string) {
  const { challenge, paymentId } = issueChallenge({
    realm: req.headers.host!,
    priceMicros: PRICE_MICROS,
    body,
    chainId: chain.chainId,
    token: chain.token,
    payee,
    expires: expiresAfter(120),
    // `/alt` asks for the credential in Payment-Authorization, for apps that use Authorization.
    ...(req.url === '/alt' ? { header: 'Payment-Authorization' } : {}),
  });
  attempts.set(paymentId, { completed: false });
  return challenge;
}

/** hub answers 402 with both protocols; the x402 half is a plain v2 document here. */
function x402Header(req: IncomingMessage): string {
  const requirements = {
    scheme: 'exact',
    network: chain.network,
    asset: chain.token.address,
    amount: PRICE_MICROS.toString(),
    payTo: payee,
    maxTimeoutSeconds: 120,
    extra: { name: chain.token.name, version: chain.token.version },
  };
  const doc = { x402Version: 2, resource: { url: `http://${req.headers.host}${req.url}` }, accepts: [requirements] };
  return Buffer.from(JSON.stringify(doc)).toString('base64');
}

async function handle(req: IncomingMessage, res: ServerResponse, body: string, record: Seen): Promise<void> {
  const reply = (status: number, json: object, headers: Record<string, string> = {}) => {
    record.status = status;
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(json));
  };
  const challenge402 = (reason?: string) =>
    reply(
      402,
      { error: 'payment_required', ...(reason ? { reason } : {}) },
      {
        'www-authenticate': serializeChallenge(challengeFor(req, body)),
        ...(req.url === '/both' ? { 'payment-required': x402Header(req) } : {}),
      },
    );

  const lookup = readCredential(req.headers);
  if (lookup.status === 'absent') return challenge402();
  record.carrier = lookup.carrier;
  if (lookup.status === 'invalid') return challenge402(lookup.reason);
  const verified = verifyEvmCharge(lookup.credential, { secret: SECRET, realm: req.headers.host! });
  if (!verified.ok) return challenge402(verified.reason);
  const charge = verified.value;
  Object.assign(record, { paymentId: charge.paymentId, nonce: charge.payload.nonce, expectedNonce: challengeNonce(charge.challenge) });
  if (!digestMatches(charge.challenge.digest, body)) return reply(409, { error: 'payment_request_mismatch' });
  const attempt = attempts.get(charge.paymentId);
  if (!attempt || attempt.completed) return reply(409, { error: 'payment_request_already_completed' });
  record.signer = await recovery.recoverSigner(charge.signed);
  if (record.signer?.toLowerCase() !== charge.payer.toLowerCase()) return challenge402('invalid_signature');

  const { paymentPayload, paymentRequirements } = toExactPayment(charge);
  const check = await facilitator.verify(paymentPayload, paymentRequirements);
  if (!check.isValid) return challenge402(check.reason);
  attempt.completed = true;
  const settled = await facilitator.settle(paymentPayload, paymentRequirements);
  if (settled.status !== 'settled') return reply(500, { error: 'settlement_failed' });
  record.transaction = settled.transaction;
  reply(200, { served: req.url, body }, { 'payment-receipt': serializeReceipt(createReceipt({ reference: settled.transaction })) });
}

const base = await serveOnLoopback(t, (req, res, body) => {
  const record: Seen = { path: req.url ?? '', headers: req.headers, status: 0 };
  seen.push(record);
  return handle(req, res, body, record).catch((err: unknown) => {
    record.status = 500;
    res.writeHead(500).end(String(err));
  });
});

const mppx = Mppx.create({
  methods: [evm({ account: privateKeyToAccount(payerKey), authorization: { name: chain.token.name, version: chain.token.version } })],
  polyfill: false,
});

t.beforeEach(() => {
  seen.length = 0;
});

t.test('mppx pays a challenge, the payment settles on chain, and mppx accepts the receipt', async (t) => {
  const [payerBefore, payeeBefore] = [await tokenBalance(chain, payer), await tokenBalance(chain, payee)];
  const response = await mppx.fetch(`${base}/search`, {
    method: 'POST',
    body: '{"q":"mpp"}',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(response.status, 200);
  t.same(await response.json(), { served: '/search', body: '{"q":"mpp"}' });

  const receipt = MppxReceipt.fromResponse(response);
  t.match(receipt, { method: 'evm', status: 'success', reference: seen[1]?.transaction });

  t.equal(seen.length, 2, 'one challenge, one paid retry');
  const [first, paid] = seen as [Seen, Seen];
  t.equal(first.status, 402);
  t.equal(first.headers['accept-payment'], 'evm/charge', 'the client announces what it can pay with');
  t.match(paid.headers.authorization, /^Payment [A-Za-z0-9_-]+$/);
  t.equal(paid.carrier, 'authorization-payment');
  t.ok(attempts.has(paid.paymentId!), 'the payment id came back through opaque');
  t.equal(paid.nonce, paid.expectedNonce, 'EIP-3009 nonce = keccak256(challenge id ‖ realm)');
  t.equal(paid.signer?.toLowerCase(), payer.toLowerCase(), 'the signature recovers to the paying account');

  const tx = await chainReader(chain).getTransactionReceipt({ hash: paid.transaction as `0x${string}` });
  t.equal(tx.status, 'success');
  t.equal(await tokenBalance(chain, payer), payerBefore - 12_500n, '$0.0125 in a 6-decimal token');
  t.equal(await tokenBalance(chain, payee), payeeBefore + 12_500n);
});

t.test('offered x402 and MPP together, as hub offers them, mppx pays with MPP', async (t) => {
  const response = await mppx.fetch(`${base}/both`, { method: 'POST', body: 'x' });
  t.equal(response.status, 200);
  const paid = seen[1]!;
  t.equal(paid.carrier, 'authorization-payment');
  t.notOk(paid.headers['payment-signature'], 'no x402 payment alongside');
});

t.test('a challenge naming Payment-Authorization gets the credential there', async (t) => {
  const response = await mppx.fetch(`${base}/alt`, {
    method: 'POST',
    body: 'x',
    headers: { authorization: 'Bearer hubagt_not_a_credential' },
  });
  t.equal(response.status, 200);
  const paid = seen[1]!;
  t.equal(paid.carrier, 'payment-authorization');
  t.equal(paid.headers.authorization, 'Bearer hubagt_not_a_credential', 'the app’s own Authorization is left alone');
});

t.test('the same credential as Bearer and Payment-Authorization; replays and changed bodies are refused', async (t) => {
  const challenged = async () => {
    const response = await fetch(`${base}/carriers`, { method: 'POST', body: 'same body' });
    t.equal(response.status, 402);
    return (await mppx.createCredential(response)).slice('Payment '.length);
  };

  const bearer = await challenged();
  const first = await fetch(`${base}/carriers`, { method: 'POST', body: 'same body', headers: { authorization: `Bearer ${bearer}` } });
  t.equal(first.status, 200, 'Authorization: Bearer <credential>, as hub’s spec has it');
  t.equal(seen.at(-1)?.carrier, 'authorization-bearer');
  const replay = await fetch(`${base}/carriers`, { method: 'POST', body: 'same body', headers: { authorization: `Payment ${bearer}` } });
  t.equal(replay.status, 409, 'one payment, one delivery');

  const bare = await challenged();
  const second = await fetch(`${base}/carriers`, { method: 'POST', body: 'same body', headers: { 'payment-authorization': bare } });
  t.equal(second.status, 200, 'Payment-Authorization with a bare credential');
  t.equal(seen.at(-1)?.carrier, 'payment-authorization');

  const moved = await challenged();
  const changed = await fetch(`${base}/carriers`, { method: 'POST', body: 'other body', headers: { authorization: `Payment ${moved}` } });
  t.equal(changed.status, 409, 'the digest binds the credential to the challenged body');
  t.same(await changed.json(), { error: 'payment_request_mismatch' });
});

t.test('a credential for another server is answered with a fresh challenge', async (t) => {
  const response = await fetch(`${base}/x`, { method: 'POST', body: '' });
  const challenge = response.headers.get('www-authenticate')!;
  const forged = challenge.replace(/id="[^"]+"/, 'id="AAAA"');
  const credential = await mppx.createCredential(new Response(null, { status: 402, headers: { 'www-authenticate': forged } }));
  const paid = await fetch(`${base}/x`, { method: 'POST', body: '', headers: { authorization: credential } });
  t.equal(paid.status, 402);
  t.same(await paid.json(), { error: 'payment_required', reason: 'unknown_challenge' });
  t.ok(paid.headers.get('www-authenticate')?.startsWith('Payment '));
});

t.test('mppx signs only for tokens it knows the EIP-712 domain of: the agent configures it', async (t) => {
  // mppx 0.11 takes the token's domain name and version from its own configuration (or its asset
  // list: USDC on Base, Celo), never from the challenge; hub's `methodDetails.authorization` is for
  // other clients. Unconfigured, the client refuses before signing anything.
  const unconfigured = Mppx.create({ methods: [evm({ account: privateKeyToAccount(payerKey) })], polyfill: false });
  await t.rejects(unconfigured.fetch(`${base}/x`, { method: 'POST', body: '' }), /requires token name and version/);
  t.equal(seen.length, 1, 'only the unpaid request reached the server');
});
