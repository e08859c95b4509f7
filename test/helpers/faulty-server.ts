// A server on hub's HTTP runtime whose routes fail in every way a request can: run as a child
// process (the guard it installs is process-wide), it prints its port and serves until killed.
// A timer a request set throws outside every request's guard, which ends it.
import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import { containProcessFaults, guardFor } from '../../runtime/containment.js';
import { createHttpServer, listen } from '../../runtime/http-server.js';
import { sendJson } from '../../runtime/respond.js';

const logger = pino({ level: 'info' });
containProcessFaults(logger);

const failures: Record<string, (res: import('node:http').ServerResponse) => unknown> = {
  '/throw': () => {
    throw new Error('thrown by the handler');
  },
  '/reject': async () => {
    await null;
    throw new Error('rejected by the handler');
  },
  '/orphan-promise': (res) => {
    void Promise.reject(new Error('a promise nobody awaited'));
    sendJson(res, 200, { answered: true });
  },
  '/close-listener': (res) => {
    res.once('close', () => {
      throw new Error('thrown by a close listener');
    });
    sendJson(res, 200, { answered: true });
  },
  '/socket-listener': (res) => {
    res.socket!.once('close', () => {
      throw new Error('thrown by a socket listener');
    });
    res.destroy();
  },
  '/unheard-error': (res) => {
    // A stream of the request's own (as the seller's answer is), failing with nobody listening.
    const stream = new PassThrough();
    guardFor(res, stream);
    stream.destroy(new Error('a stream error nobody listens for'));
  },
  '/timer': () => {
    setTimeout(() => {
      throw new Error('thrown by a timer, outside every guard');
    }, 1);
  },
};

const server = createHttpServer(
  (req, res) => {
    const fail = failures[req.url ?? ''];
    if (fail) return fail(res);
    sendJson(res, 200, { ok: true, pid: process.pid });
  },
  { timeoutMs: 5_000, idleTimeoutMs: 2_000 },
  logger,
  { accessLog: false },
);
const port = await listen(server, 0, '127.0.0.1');
process.stderr.write(`listening ${port}\n`);
