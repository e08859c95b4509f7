import type { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { INTERNAL_ERROR_MESSAGE } from '../shared/errors.js';
import { sendJson } from './respond.js';

/**
 * One request being served, as far as errors are concerned: whatever its handler throws or
 * rejects, and whatever a listener of its request, its response, its socket (or another stream it
 * guards with `guardFor`) throws, is this request's failure, not the process's. It is logged with
 * the request's ids and only this request's connection is closed; every other request, and the
 * process, go on.
 *
 * Why not an async context (AsyncLocalStorage), which would also catch what a timer the handler
 * set throws later: on Node 20 it hooks every promise the process makes, and measured 2.5–3.5×
 * slower on promise-heavy code, which the proxy's hot path is. What it would add is left to the
 * process guard below.
 */
export type RequestScope = {
  /** This process's own sequence for the request, in its access log line and any failure. */
  readonly logId: string;
  /** hub's request id (`hubreq_…`) once the proxy has given it one. */
  requestId?: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  failed: boolean;
};

const scopes = new WeakMap<ServerResponse, { scope: RequestScope; logger: Logger }>();
let sequence = 0;

/** Names hub's request id for the request `res` answers, so its log lines carry that id. */
export function tagRequest(res: ServerResponse, requestId: string): void {
  const known = scopes.get(res);
  if (known) known.scope.requestId = requestId;
}

/**
 * Makes `emitter` (a stream the request reads or writes beside its own: the seller's answer)
 * part of the request `res` answers: what its listeners throw fails that request alone.
 */
export function guardFor(res: ServerResponse, emitter: EventEmitter): void {
  const known = scopes.get(res);
  if (known) guardEmitter(emitter, (err) => failRequest(known.scope, err, known.logger));
}

/** Serves one request with every error it raises, as above, contained to it. */
export function serveContained(
  req: IncomingMessage,
  res: ServerResponse,
  logger: Logger,
  serve: (scope: RequestScope) => unknown,
): RequestScope {
  const scope: RequestScope = { logId: `r${(++sequence).toString(36)}`, req, res, failed: false };
  scopes.set(res, { scope, logger });
  const fail = (err: unknown) => failRequest(scope, err, logger);
  guardEmitter(req, fail);
  guardEmitter(res, fail);
  try {
    const result = serve(scope);
    if (result instanceof Promise) result.catch(fail);
  } catch (err) {
    fail(err);
  }
  return scope;
}

/** A connection's own listeners (hub's and Node's) throwing closes that connection, nothing more. */
export function containSocket(socket: Socket, logger: Logger): void {
  const remoteAddress = socket.remoteAddress;
  guardEmitter(socket, (err) => {
    logger.error({ err, remoteAddress }, 'connection failed; it is closed');
    socket.destroy();
  });
}

/**
 * Makes an emitter's listeners unable to throw past it: an `emit` that throws (a listener's bug,
 * or an 'error' nobody listens for) hands the error to `onError` instead of the event loop.
 */
function guardEmitter(emitter: EventEmitter, onError: (err: unknown) => void): void {
  const emit = emitter.emit;
  emitter.emit = function guardedEmit(this: EventEmitter, ...args: Parameters<EventEmitter['emit']>) {
    try {
      return emit.apply(this, args);
    } catch (err) {
      onError(err);
      return true;
    }
  };
}

/**
 * One request failed in a way its handler did not answer: logged with its ids, answered 500 if
 * nothing was sent yet, and its connection closed (a keep-alive connection cannot be trusted to
 * be in step after that). A request that had already been answered is only logged: its
 * connection may be serving the next request by now.
 */
function failRequest(scope: RequestScope, err: unknown, logger: Logger): void {
  const { req, res } = scope;
  logger.error(
    { err, reqId: scope.logId, requestId: scope.requestId, method: req.method, path: loggablePath(req.url) },
    scope.failed ? 'request failed again' : 'request failed; its connection is closed',
  );
  if (scope.failed || res.writableFinished) return;
  scope.failed = true;
  try {
    if (!res.headersSent && !res.destroyed) {
      res.once('finish', () => res.destroy());
      sendJson(res, 500, { error: INTERNAL_ERROR_MESSAGE }, { connection: 'close' });
      return;
    }
  } catch {
    // Answering failed too: closing is all that is left.
  }
  res.destroy();
  req.socket?.destroy();
}

/**
 * For the process as a whole. A promise rejected with nobody to hear it (a request's handler
 * that dropped one, most likely) unwound nothing: it is logged and the process goes on. An
 * exception thrown outside every request's guard (a timer's or a background loop's callback) may
 * have left this process's state half-changed: it is logged at fatal and the process exits, for
 * its supervisor to start it again at once.
 */
export function containProcessFaults(logger: Logger): void {
  process.on('unhandledRejection', (err) => logger.error({ err }, 'a promise was rejected and nobody handled it'));
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception outside any request; exiting');
    process.exit(1);
  });
}

/** The longest path a log line repeats. */
const MAX_LOGGED_PATH = 512;
/** hub's secrets (tokens, keys, link tokens): a `hub…_` prefix and 40 base62 characters. */
const BEARER_SECRET = /\b(hub[a-z]*_)[0-9A-Za-z]{40}\b/g;

/**
 * A request target as logs may keep it: the query is left out and hub's tokens are cut (a claim
 * link's path holds its one-time token: logs keep only the token's kind).
 */
export function loggablePath(target: string | undefined): string {
  const url = target ?? '';
  const queryAt = url.indexOf('?');
  return (queryAt < 0 ? url : url.slice(0, queryAt)).slice(0, MAX_LOGGED_PATH).replace(BEARER_SECRET, '$1…');
}
