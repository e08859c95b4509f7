import pino from 'pino';
import t from 'tap';
import { withLoopMark } from '../../../proxy/arrival/loop-mark.js';
import { createProxy } from '../../../proxy/create.js';
import { upstreamRequestHeaders } from '../../../proxy/paid-call/headers.js';
import { payRequestOf } from '../../../proxy/paid-call/pay-request.js';
import type { RequestView } from '../../../runtime/request-view.js';
import { loadConfig } from '../../../shared/config.js';
import type { PaySeller } from '../../../shared/contract.js';
import { ApiError } from '../../../shared/errors.js';
import { sha256Hex } from '../../../shared/signature.js';

// A paid call's facts, decided from a request seen without a socket: the edge cases of the pay
// path as plain values. Nothing here reaches the control-plane (anonymous callers need no lookup),
// so the proxy's services point at a port nothing answers on. The same facts are exercised over
// real sockets by forwarding.test.ts and the payment tests.
const internalToken = 'internal-token-for-pay-request-tests-0123456789';
const config = loadConfig({ HUB_CONTROL_PLANE_URL: 'http://127.0.0.1:9', HUB_INTERNAL_TOKEN: internalToken });
const proxy = createProxy(config, pino({ level: 'silent' }), internalToken);
t.teardown(() => proxy.stop());
const { services } = proxy;

const seller: PaySeller = {
  id: 'sel_test',
  organizationId: 'org_test',
  slug: 'acme',
  name: 'Acme',
  upstreamBaseUrl: 'http://127.0.0.1:9',
  sandbox: false,
  hostnames: [],
  signingSecrets: [{ kid: 'k1', secret: 'seller-secret' }],
  encryptionKeys: [],
  updatedAt: new Date(0).toISOString(),
};

const view = (over: Partial<RequestView> & { headers?: RequestView['headers'] } = {}): RequestView => ({
  method: 'GET',
  url: '/search?q=1',
  socket: { remoteAddress: '203.0.113.7' },
  ...over,
  headers: { host: 'acme.pay.localhost', ...over.headers },
});
const noBody = async () => {
  throw new Error('a request without a body is not read');
};

t.test('a GET without a body: the empty body, its digest, paid mode, no proof', async (t) => {
  const request = await payRequestOf(services, view(), seller, noBody);
  t.equal(request.method, 'GET');
  t.equal(request.target, '/search?q=1', 'the raw target, as sent');
  t.equal(request.body.length, 0);
  t.equal(request.bodyDigest, sha256Hex(Buffer.alloc(0)));
  t.equal(request.mode, 'paid');
  t.equal(request.proof.kind, 'none');
  t.equal(request.caller.kind, 'anonymous');
  t.same(request.origin, { scheme: 'http', host: 'acme.pay.localhost' });
});

t.test('a body is read once and digested', async (t) => {
  let reads = 0;
  const body = Buffer.from('{"q":"x"}');
  const request = await payRequestOf(services, view({ method: 'POST', headers: { 'content-length': '9' } }), seller, async () => {
    reads++;
    return body;
  });
  t.equal(reads, 1);
  t.equal(request.bodyDigest, sha256Hex(body));
});

t.test('refusals come before the body is read', async (t) => {
  const refused = async (request: RequestView, code: string, target: PaySeller = seller) => {
    const err = await payRequestOf(services, request, target, noBody).catch((e: unknown) => e);
    t.ok(err instanceof ApiError, code);
    t.equal((err as ApiError).code, code);
    return err as ApiError;
  };
  await refused(view({ headers: { 'cdn-loop': withLoopMark(undefined, services.pools.loopMark) } }), 'loop_detected');
  await refused(view(), 'signing_secret_required', { ...seller, signingSecrets: [] });
  const malformed = await refused(view({ headers: { 'payment-signature': 'not base64 json' } }), 'invalid_request');
  t.match(malformed.reason, /Malformed payment header/);
  const free = await refused(view({ headers: { 'hub-mode': ' FREE ' } }), 'bearer_required');
  t.match(free.extra, { auth: { scheme: 'Bearer', claim: { url: 'http://acme.pay.localhost/agents/claim' } } });
});

t.test('behind a trusted reverse proxy, the origin is what it reports; otherwise the client’s word is ignored', async (t) => {
  const forwarded = view({ headers: { 'x-forwarded-proto': 'https, http', 'x-forwarded-host': 'api.example.com' } });
  t.same((await payRequestOf(services, forwarded, seller, noBody)).origin, { scheme: 'http', host: 'acme.pay.localhost' });
  const trusting = { ...services, config: { ...config, proxy: { ...config.proxy, trustProxy: true } } };
  t.same((await payRequestOf(trusting, forwarded, seller, noBody)).origin, { scheme: 'https', host: 'api.example.com' });
  const garbage = view({ headers: { 'x-forwarded-proto': 'gopher', 'x-forwarded-host': 'bad host/..' } });
  t.same((await payRequestOf(trusting, garbage, seller, noBody)).origin, { scheme: 'http', host: 'acme.pay.localhost' });
});

t.test('what the seller is sent: hop-by-hop, payment and hub fields dropped, forwarding fields recomputed', async (t) => {
  const request = await payRequestOf(
    services,
    view({
      headers: {
        connection: 'keep-alive, x-private',
        'x-private': 'dropped: listed in Connection',
        'keep-alive': 'timeout=5',
        payment: 'not the seller’s',
        'hub-agent-id': 'forged',
        'x-forwarded-for': '198.51.100.1',
        authorization: 'Basic c2VsbGVyOm93bg==',
        accept: 'application/json',
      },
    }),
    seller,
    noBody,
  );
  const headers = upstreamRequestHeaders(request.req, { requestId: 'hubreq_x' } as never, request.dropAuthorization, 0, 'http', 'mark');
  t.equal(headers.accept, 'application/json');
  t.equal(headers.authorization, 'Basic c2VsbGVyOm93bg==', 'a seller’s own Authorization passes');
  for (const name of ['connection', 'x-private', 'keep-alive', 'payment']) t.notOk(name in headers, `${name} dropped`);
  t.not(headers['hub-agent-id'], 'forged', 'hub fields are hub’s');
  t.equal(headers['x-forwarded-for'], '198.51.100.1, 203.0.113.7', 'the peer is appended');
});
