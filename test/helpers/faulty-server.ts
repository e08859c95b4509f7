// A server on hub's HTTP runtime whose routes fail in every way a request can: run as a child
// process (the guard it installs is process-wide), it prints its port and serves until killed.
// SIGUSR2 makes it throw outside any request, which must still end it.
import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import { containProcessFaults } from '../../runtime/containment.js';
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
  '/timer': () => {
    setTimeout(() => {
      throw new Error('thrown by a timer the handler set');
    }, 1);
  },
  '/orphan-promise': () => {
    void Promise.reject(new Error('a promise nobody awaited'));
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
  '/unheard-error': () => {
    new PassThrough().destroy(new Error('a stream error nobody listens for'));
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
process.on('SIGUSR2', () => {
  throw new Error('thrown outside any request');
});
const port = await listen(server, 0, '127.0.0.1');
process.stderr.write(`listening ${port}\n`);
