import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { HubConfig } from '../shared/config.js';
import { ApiError, errorResponse } from '../shared/errors.js';
import { containSocket, loggablePath, type RequestScope, serveContained } from './containment.js';
import { sendJson } from './respond.js';

/**
 * An HTTP server for either port, holding slow and malformed clients at bay: a request must
 * arrive whole within `timeoutMs` and never pause longer than `idleTimeoutMs` (a body trickled
 * a byte at a time would otherwise hold a connection for minutes). Time spent after the request
 * has arrived (hub's own work, the seller's API) is not the client's and is not limited here.
 * What Node's parser refuses (bad framing, oversized heads, unknown methods) never reaches
 * `handler`; it is answered as Node does and logged at debug; so are request lines of another
 * HTTP version and transfer codings hub would have to drop (`refusedFraming`). With
 * `accessLog`, every request leaves one line at info once its response is done (or abandoned).
 * Nothing one request or connection throws ends the process (runtime/containment.ts).
 */
export function createHttpServer(
  handler: RequestListener,
  limits: HubConfig['requests'],
  logger: Logger,
  options: { accessLog: boolean },
): Server {
  const log = options.accessLog && logger.isLevelEnabled('info') ? logger : undefined;
  const server = createServer(
    {
      requestTimeout: limits.timeoutMs,
      headersTimeout: limits.timeoutMs,
      // How often Node checks those two limits; its default (30 s) would make them that coarse.
      connectionsCheckingInterval: Math.min(1_000, limits.idleTimeoutMs),
    },
    (req, res) => {
      serveContained(req, res, logger, (scope) => {
        holdToIdleLimit(req, res, limits.idleTimeoutMs);
        if (log) logWhenDone(log, scope);
        const refusal = refusedFraming(req);
        // Answered without reading the body: Node reads and drops what of it still comes, within
        // the request's time limit, and the connection stays in step. (Closing over unread bytes
        // would reset it, and a reset can take the answer with it before the client reads it.)
        if (refusal) return sendJson(res, refusal.status, refusal.toBody());
        return handler(req, res);
      });
    },
  );
  server.on('connection', (socket: Socket) => {
    containSocket(socket, logger);
    // A head that stalls before any request exists: the socket's own idle limit, until the
    // request takes over (an unanswered timeout destroys the socket).
    socket.setTimeout(limits.idleTimeoutMs);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => refuseMalformed(err, socket, logger));
  return server;
}

/** Answers a stalled request with a 408 envelope; once it has fully arrived, pauses are hub's. */
function holdToIdleLimit(req: IncomingMessage, res: ServerResponse, idleMs: number): void {
  const socket = req.socket;
  const timeOut = () => {
    if (req.complete) return void socket.setTimeout(0);
    // Hub has not begun to read the body (it is still deciding, say looking up the seller):
    // the client is stalled by hub's own full buffers, not idle. The whole-request limit still
    // bounds the wait.
    if (req.readableFlowing === null) return void socket.setTimeout(idleMs);
    if (res.headersSent) return void socket.destroy();
    const { status, body } = errorResponse(new ApiError('request_timeout'));
    res.once('finish', () => socket.destroy());
    sendJson(res, status, body, { connection: 'close' });
  };
  // Judged once this turn's reads are done (setImmediate runs after them): hub may have begun to
  // read the body in this very turn, with the bytes a client held back by hub's own full buffers
  // already waiting on the socket. Bytes read meanwhile mean the client is not idle.
  const onIdle = () => {
    const read = socket.bytesRead;
    setImmediate(() => {
      if (socket.destroyed) return;
      if (socket.bytesRead !== read) return void socket.setTimeout(idleMs);
      timeOut();
    });
  };
  socket.setTimeout(idleMs);
  // On the response: Node tells a request of its socket's timeout only while it is incomplete.
  res.on('timeout', onIdle);
  res.once('close', () => res.off('timeout', onIdle));
}

/**
 * One line per request: its log id, method, path (as `loggablePath` keeps it: tokens are
 * credentials), host, status, milliseconds and the peer's address; `aborted` when the response
 * never finished.
 */
function logWhenDone(logger: Logger, scope: RequestScope): void {
  const { req, res } = scope;
  const started = performance.now();
  // Read now: by the time the response closes, the socket may be gone from the request.
  const remoteAddress = req.socket.remoteAddress;
  res.once('close', () => {
    logger.info(
      {
        reqId: scope.logId,
        ...(scope.requestId ? { requestId: scope.requestId } : {}),
        method: req.method,
        path: loggablePath(req.url),
        host: req.headers.host,
        status: res.statusCode,
        ms: Math.round((performance.now() - started) * 10) / 10,
        remoteAddress,
        ...(res.writableFinished ? {} : { aborted: true }),
      },
      'request',
    );
  });
}

/**
 * What Node's parser lets through but hub will not pass on: a request line claiming another
 * HTTP version than 1.x (this is an HTTP/1 listener), and a transfer coding other than exactly
 * `chunked`. Node removes the chunked framing and would hand the body on with its other codings
 * (`gzip, chunked`) silently dropped; hub refuses rather than forward a body changed.
 */
function refusedFraming(req: IncomingMessage): ApiError | undefined {
  if (req.httpVersionMajor !== 1) return new ApiError('http_version_not_supported');
  const coding = req.headers['transfer-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') return new ApiError('transfer_encoding_not_supported');
  return undefined;
}

/** Node's answers to what its parser refuses, plus a debug line saying what and from whom. */
function refuseMalformed(err: NodeJS.ErrnoException, socket: Socket, logger: Logger): void {
  logger.debug({ code: err.code, remoteAddress: socket.remoteAddress }, 'request refused by the HTTP parser');
  if (err.code !== 'ECONNRESET' && socket.writable && socket.bytesWritten === 0) {
    const status =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 408
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? 431
          : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
            ? 413
            : 400;
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
  }
  socket.destroy();
}

export class ListenError extends Error {
  override name = 'ListenError';
}

/** Listens and resolves with the bound port; a taken or forbidden port becomes one clear line. */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'EADDRINUSE'
          ? 'is already in use'
          : err.code === 'EACCES'
            ? 'needs privileges this process lacks'
            : err.code === 'EADDRNOTAVAIL'
              ? 'is on an address this machine does not have'
              : `failed (${err.code ?? err.message})`;
      reject(new ListenError(`cannot listen on ${host}:${port}: the port ${why}`));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops accepting, lets in-flight requests finish (up to `graceMs`), then drops what remains. */
export function closeServer(server: Server, graceMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
