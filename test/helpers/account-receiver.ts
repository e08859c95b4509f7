import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { DeliverySchedule } from '../../control-plane/delivery/schedule.js';
import { closeServer, listen } from '../../runtime/http-server.js';
import { createAccountEndpoint } from '../../sdk/account/endpoint.js';
import { MemoryAccountStore } from '../../sdk/account/memory-store.js';
import type { MintDecision, WriteReply } from '../../sdk/account/replies.js';
import type { HubIdentity } from '../../sdk/identity.js';
import { sendJson } from '../../sdk/node.js';

type Tap = { teardown: (fn: () => unknown) => void };

/** A delivery schedule in milliseconds, so retries, hints and give-ups happen within a test. */
export const FAST_DELIVERY: DeliverySchedule = {
  firstBackoffMs: 20,
  maxBackoffMs: 80,
  maxHintMs: 300,
  maxAttempts: 6,
  giveUpAfterMs: 60_000,
  budgetMs: 400,
  leaseMs: 2_000,
};

/**
 * How the receiver answers the next deliveries: as the SDK's endpoint would (`sdk`), or with a
 * fault: a status of its own (with a `Retry-After`), a redirect, a 200 that is not JSON, a
 * connection cut without an answer, or no answer until `sleepMs` has passed.
 */
export type ReceiverMode =
  | { kind: 'sdk'; lifecycle?: WriteReply }
  | { kind: 'status'; status: number; retryAfter?: string; body?: string }
  | { kind: 'redirect' }
  | { kind: 'garbage' }
  | { kind: 'hangup' }
  | { kind: 'sleep'; sleepMs: number };

/**
 * A stateful seller's account endpoint for tests: the SDK's `createAccountEndpoint` over a memory
 * store, behind a server whose answers a test can turn into faults. Counts every request.
 */
export async function startAccountReceiver(t: Tap, secrets: (kid: string) => string | undefined) {
  const store = new MemoryAccountStore();
  let mode: ReceiverMode = { kind: 'sdk' };
  let mint: MintDecision = { apiKey: 'sk_test_key_1', maxKeys: 1 };
  const requests: {
    path: string;
    requestId: string | undefined;
    buyerEmail: string | undefined;
    sandbox: string | undefined;
    signature: string | undefined;
  }[] = [];
  /** The SDK's identity of each mint it answered. */
  const mints: HubIdentity[] = [];
  /** Accounts whose writes the seller refuses (400), whatever the mode. */
  const refused = new Set<string>();
  /** Run once, on the next request, before it is answered (a rotation mid-delivery, say). */
  let beforeNext: (() => Promise<void>) | undefined;
  const endpoint = createAccountEndpoint({
    secrets,
    store,
    lifecycle: () => (mode.kind === 'sdk' && mode.lifecycle ? mode.lifecycle : { lifecycle: 'active' }),
    mintKey: (_account, { identity }) => {
      mints.push(identity);
      return mint;
    },
  });
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    requests.push({
      path: req.url ?? '',
      requestId: req.headers['hub-request-id'] as string | undefined,
      buyerEmail: req.headers['hub-buyer-email'] as string | undefined,
      sandbox: req.headers['hub-sandbox'] as string | undefined,
      signature: req.headers['hub-signature'] as string | undefined,
    });
    const hook = beforeNext;
    beforeNext = undefined;
    await hook?.();
    const current: ReceiverMode = refused.has(String(req.headers['hub-request-id']).split(':')[0]!)
      ? { kind: 'status', status: 400, body: '{"error":"no such customer"}' }
      : mode;
    if (current.kind === 'status') {
      res.writeHead(current.status, {
        'content-type': 'application/json',
        ...(current.retryAfter ? { 'retry-after': current.retryAfter } : {}),
      });
      return void res.end(current.body ?? '{"error":"fault"}');
    }
    if (current.kind === 'redirect') {
      res.writeHead(307, { location: 'http://127.0.0.1:9/elsewhere' });
      return void res.end();
    }
    if (current.kind === 'hangup') return void req.socket.destroy();
    if (current.kind === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('{"lifecycle": act');
    }
    // Unref'd: a sleep still running when the test ends must not hold its process open that long.
    if (current.kind === 'sleep') await new Promise((resolve) => setTimeout(resolve, current.sleepMs).unref());
    if (!(await endpoint.handle(req, res))) sendJson(res, 404, { error: 'not_found' });
  });
  const port = await listen(server, 0, '127.0.0.1');
  t.teardown(() => closeServer(server, 100));
  return {
    url: `http://127.0.0.1:${port}/zeroclick/access`,
    store,
    requests,
    mints,
    refused,
    set mode(next: ReceiverMode) {
      mode = next;
    },
    set mint(next: MintDecision) {
      mint = next;
    },
    set beforeNext(hook: () => Promise<void>) {
      beforeNext = hook;
    },
  };
}
