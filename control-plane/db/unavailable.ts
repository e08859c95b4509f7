import { ApiError } from '../../shared/errors.js';

/**
 * Failures that say the database could not serve this request now, not that the request or hub
 * is wrong: unreachable, out of connections, a transaction that could not start (or was closed)
 * in its time, a lock or a write conflict lost under load. Retried a moment later, the same
 * request can succeed, so the caller gets 503 `service_unavailable` with a hint of when to come
 * back, never a 500. Every such statement ran inside a transaction that rolled back: nothing
 * half-done stays behind.
 */
const PRISMA_CODES = new Set([
  'P1001', // cannot reach the database server
  'P1002', // reached, but timed out
  'P1008', // operation timed out
  'P1017', // the server closed the connection
  'P2024', // timed out waiting for a connection from the pool
  'P2028', // transaction API error: could not start in time, or already closed
  'P2034', // write conflict or deadlock: the transaction may be retried
]);

const ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'TooManyConnections',
  'SocketTimeout',
  'TransactionAlreadyClosed',
  'TransactionWriteConflict',
]);

const POSTGRES_CODES = new Set([
  '40001', // serialization failure
  '40P01', // deadlock detected
  '55P03', // lock not available
  '57014', // statement canceled (a timeout)
  '53300', // too many connections
  '57P01', // the server is shutting down
  '57P03', // the server is starting up
]);

const SQLITE_BUSY = /SQLITE_BUSY|database is locked/;

/** The socket to the database failed (the pg driver's own errors carry no code, only these words). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);
const PG_CONNECTION_LOST = /^Connection terminated|^timeout exceeded when trying to connect|^Connection closed/;

const RETRY_AFTER_SECONDS = 1;

/**
 * SQLite's "database or disk is full" (SQLITE_FULL, primary result code 13, and its extended
 * codes): the write was rolled back whole and reads go on, but no write succeeds until someone
 * frees space, so the caller is told that, and to come back later than for a busy database.
 */
const SQLITE_FULL = 13;
const SQLITE_FULL_MESSAGE = /database or disk is full/;
const FULL_RETRY_AFTER_SECONDS = 60;

/** The 503 a database failure of the kinds above stands for; undefined for anything else. */
export function unavailableDatabase(err: unknown): ApiError | undefined {
  if (isFull(err)) {
    return new ApiError(
      'service_unavailable',
      'The database has no room left to write; nothing was changed. Try again once space is freed.',
      {
        retryAfterSeconds: FULL_RETRY_AFTER_SECONDS,
      },
    );
  }
  if (!isTransient(err)) return undefined;
  return new ApiError('service_unavailable', 'The database could not serve this request now; try again shortly.', {
    retryAfterSeconds: RETRY_AFTER_SECONDS,
  });
}

/** SQLITE_FULL as the ORM's driver adapter reports it, or as better-sqlite3 throws it on the SQL lane (sql.ts). */
function isFull(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, meta, message, name } = err as {
    code?: unknown;
    meta?: { driverAdapterError?: { cause?: unknown } };
    message?: unknown;
    name?: unknown;
  };
  const cause = meta?.driverAdapterError?.cause as { kind?: unknown; extendedCode?: unknown } | undefined;
  if (cause?.kind === 'sqlite' && typeof cause.extendedCode === 'number' && (cause.extendedCode & 0xff) === SQLITE_FULL) return true;
  if (name === 'SqliteError' && typeof code === 'string' && code.startsWith('SQLITE_FULL')) return true;
  return typeof message === 'string' && SQLITE_FULL_MESSAGE.test(message);
}

function isTransient(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, meta, message } = err as { code?: unknown; meta?: { driverAdapterError?: { cause?: unknown } }; message?: unknown };
  if (typeof code === 'string' && PRISMA_CODES.has(code)) return true;
  // The SQL lane's (sql.ts) failures are the driver's own: PostgreSQL's SQLSTATE in `code`.
  if (typeof code === 'string' && POSTGRES_CODES.has(code)) return true;
  const cause = meta?.driverAdapterError?.cause as { kind?: unknown; code?: unknown; message?: unknown } | undefined;
  if (cause) {
    if (typeof cause.kind === 'string' && ADAPTER_KINDS.has(cause.kind)) return true;
    if (cause.kind === 'postgres' && typeof cause.code === 'string' && POSTGRES_CODES.has(cause.code)) return true;
    if (cause.kind === 'sqlite' && typeof cause.message === 'string' && SQLITE_BUSY.test(cause.message)) return true;
  }
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  if (typeof message !== 'string') return false;
  return PG_CONNECTION_LOST.test(message) || (SQLITE_BUSY.test(message) && (err as { name?: unknown }).name === 'SqliteError');
}
