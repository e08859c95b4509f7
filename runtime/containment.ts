import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { INTERNAL_ERROR_MESSAGE } from '../shared/errors.js';
import { sendJson } from './respond.js';

/**
 * One request being served, as far as errors are concerned: whatever its handler, its hooks, its
 * streams or its socket throw is this request's failure, not the process's. It is logged with
 * the request's ids and only this request's connection is closed; every other request, and the
 * process, go on.
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

const scopes = new AsyncLocalStorage<RequestScope>();
let sequence = 0;

/** The request being served in this async context, if any. */
export function currentRequest(): RequestScope | undefined {
  return scopes.getStore();
}

/** Names hub's request id for the request being served, so a failure of it is logged with that id. */
export function tagRequest(requestId: string): void {
  const scope = scopes.getStore();
  if (scope) scope.requestId = requestId;
}

/**
 * Serves one request with every error it can raise contained: thrown by `serve` or rejected from
 * its promise, thrown by a listener of the request, the response or (through `containSocket`) the
 * connection, or thrown later by anything `serve` started (timers, callbacks: the process-level
 * guard finds the request through the async context).
 */
export function serveContained(
  req: IncomingMessage,
  res: ServerResponse,
  logger: Logger,
  serve: (scope: RequestScope) => unknown,
): RequestScope {
  const scope: RequestScope = { logId: `r${(++sequence).toString(36)}`, req, res, failed: false };
  guardEmitter(req, (err) => failRequest(scope, err, logger));
  guardEmitter(res, (err) => failRequest(scope, err, logger));
  scopes.run(scope, () => {
    try {
      const result = serve(scope);
      if (result instanceof Promise) result.catch((err: unknown) => failRequest(scope, err, logger));
    } catch (err) {
      failRequest(scope, err, logger);
    }
  });
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
 * For the process as a whole: an exception or rejection nobody caught is, when it arose while a
 * request was being served, that request's failure (above); anything else is a fault of the
 * process itself, which logs it and exits for its supervisor to start it again.
 */
export function containProcessFaults(logger: Logger): void {
  const onFault = (kind: string) => (err: unknown) => {
    const scope = scopes.getStore();
    if (scope) return failRequest(scope, err, logger);
    logger.fatal({ err }, `${kind} outside any request; exiting`);
    process.exit(1);
  };
  process.on('uncaughtException', onFault('uncaught exception'));
  process.on('unhandledRejection', onFault('unhandled rejection'));
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
