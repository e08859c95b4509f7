import t from 'tap';
import { BaseError, createPublicClient, HttpRequestError, RpcRequestError, TimeoutError } from 'viem';
import { nodeAnswered } from '../../../control-plane/facilitator/chain-errors.js';
import { rpcTransport } from '../../../control-plane/facilitator/rpc-transport.js';
import { serveOnLoopback } from '../../helpers/loopback-server.js';

// The settler's JSON-RPC transport against a node written for the test: calls of one turn share a
// request, answers find their calls by id whatever their order, and each failure is the viem error
// the settlement code tells apart (the node answered, or it did not).

type Call = { id: number; method: string; params: unknown[] };

t.test('the settler’s JSON-RPC transport', async (t) => {
  const posts: (Call | Call[])[] = [];
  let mode: 'answer' | 'http-500' | 'silent' | 'garbage' | 'null' | 'not-json' = 'answer';
  const url = await serveOnLoopback(t, (_req, res, body) => {
    const calls = JSON.parse(body) as Call | Call[];
    posts.push(calls);
    if (mode === 'silent') return; // never answers
    if (mode === 'http-500') return res.writeHead(500).end('node down');
    if (mode === 'garbage') return res.writeHead(200, { 'content-type': 'application/json' }).end('[{"id": 999, "result": "0x1"}]');
    if (mode === 'null') return res.writeHead(200, { 'content-type': 'application/json' }).end('[null]');
    if (mode === 'not-json') return res.writeHead(200, { 'content-type': 'application/json' }).end('<html>');
    const answer = (call: Call) =>
      call.method === 'eth_fail'
        ? { jsonrpc: '2.0', id: call.id, error: { code: -32000, message: 'nonce too low' } }
        : {
            jsonrpc: '2.0',
            id: call.id,
            result: call.method === 'eth_chainId' ? '0x7a69' : `0x${(call.params?.length ?? 0).toString(16)}`,
          };
    // Answered in reverse order: matched by id, not by position.
    const answers = Array.isArray(calls) ? calls.map(answer).reverse() : answer(calls);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers));
  });
  const rpc = rpcTransport(url, { timeoutMs: 500 });
  t.teardown(rpc.close);
  const client = createPublicClient({ transport: rpc.transport });
  const request = client.request as (args: { method: string; params?: unknown[] }) => Promise<unknown>;

  await t.test('calls of one turn go out together and each gets its own answer', async (t) => {
    posts.length = 0;
    const answers = await Promise.all([
      request({ method: 'eth_chainId' }),
      request({ method: 'eth_two', params: [1, 2] }),
      request({ method: 'eth_three', params: [1, 2, 3] }),
    ]);
    t.same(answers, ['0x7a69', '0x2', '0x3']);
    t.equal(posts.length, 1, 'one request to the node');
    t.equal((posts[0] as Call[]).length, 3);
    t.equal(await client.getChainId(), 31337, 'a call alone goes out unbatched');
    t.notOk(Array.isArray(posts[1]));
  });

  await t.test('a JSON-RPC error is the node’s answer', async (t) => {
    const [failed, fine] = await Promise.allSettled([request({ method: 'eth_fail' }), request({ method: 'eth_two', params: [0, 0] })]);
    t.equal(fine.status === 'fulfilled' && fine.value, '0x2', 'the call beside it is answered');
    const err = failed.status === 'rejected' ? (failed.reason as BaseError) : undefined;
    t.ok(err instanceof BaseError);
    t.ok(
      err?.walk((e) => e instanceof RpcRequestError),
      'an RpcRequestError',
    );
    t.equal(nodeAnswered(err), true);
    t.match(err?.message, /nonce too low/);
  });

  await t.test('a node that fails, says nothing or answers nonsense did not answer', async (t) => {
    for (const [failure, kind] of [
      ['http-500', HttpRequestError],
      ['silent', TimeoutError],
      ['garbage', HttpRequestError],
      ['null', HttpRequestError],
      ['not-json', HttpRequestError],
    ] as const) {
      mode = failure;
      const err = await request({ method: 'eth_chainId' }).catch((e: BaseError) => e);
      t.ok(err instanceof BaseError && err.walk((e) => e instanceof kind), `${failure}: ${kind.name}`);
      t.equal(nodeAnswered(err), false, `${failure}: not the node's answer`);
    }
    mode = 'answer';
    t.equal(await client.getChainId(), 31337, 'and the next call goes through');
  });

  await t.test('a refused connection did not answer either', async (t) => {
    const refused = rpcTransport('http://127.0.0.1:9', { timeoutMs: 500 });
    t.teardown(refused.close);
    const nobody = createPublicClient({ transport: refused.transport });
    const err = await nobody.getChainId().catch((e: BaseError) => e);
    t.ok(err instanceof BaseError && err.walk((e) => e instanceof HttpRequestError));
    t.equal(nodeAnswered(err), false);
  });
});
