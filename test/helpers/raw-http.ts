import { connect } from 'node:net';

export type RawAnswer = {
  /** The status of the first response, or undefined when the server closed without answering. */
  status: number | undefined;
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent. */
  raw: string;
  /** Milliseconds from connecting until the server closed the connection (or the wait ended). */
  elapsedMs: number;
};

/**
 * How a raw client leaves after its last part: it stays and listens (`wait`), half-closes its
 * side as a client that has nothing more to send (`end`), or resets the connection (`reset`).
 */
export type RawEnding = 'wait' | 'end' | 'reset';

/**
 * Sends bytes over a plain TCP connection, exactly as written (no HTTP client would send a
 * duplicate Host or `GET *`), and collects what comes back until the server closes or
 * `waitMs` passes. `parts` are written one after another, `gapMs` apart: a slow client.
 */
export function rawExchange(
  port: number,
  parts: string | Buffer | (string | Buffer)[],
  options: { gapMs?: number; waitMs?: number; ending?: RawEnding } = {},
): Promise<RawAnswer> {
  const chunks = Array.isArray(parts) ? parts : [parts];
  const { gapMs = 0, waitMs = 5_000, ending = 'wait' } = options;
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    let closed = false;
    const timers: NodeJS.Timeout[] = [];
    const done = () => {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseResponse(raw), raw, elapsedMs: performance.now() - started });
    };
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      raw += data;
    });
    socket.on('close', done);
    socket.on('error', done);
    socket.on('connect', () => {
      chunks.forEach((chunk, i) => {
        timers.push(
          setTimeout(() => {
            if (!closed && socket.writable) socket.write(chunk);
          }, i * gapMs),
        );
      });
      if (ending !== 'wait') {
        timers.push(
          setTimeout(() => {
            if (closed) return;
            if (ending === 'end') socket.end();
            else {
              socket.resetAndDestroy();
              done();
            }
          }, chunks.length * gapMs),
        );
      }
      timers.push(setTimeout(done, waitMs));
    });
  });
}

function parseResponse(raw: string): Pick<RawAnswer, 'status' | 'headers' | 'body'> {
  const headEnd = raw.indexOf('\r\n\r\n');
  if (!raw.startsWith('HTTP/') || headEnd < 0) return { status: undefined, headers: {}, body: '' };
  const [statusLine, ...lines] = raw.slice(0, headEnd).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.slice(headEnd + 4);
  const length = headers['content-length'];
  if (length !== undefined) body = body.slice(0, Number(length));
  else if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

function dechunk(chunked: string): string {
  let body = '';
  let at = 0;
  for (;;) {
    const lineEnd = chunked.indexOf('\r\n', at);
    const size = Number.parseInt(chunked.slice(at, lineEnd), 16);
    if (lineEnd < 0 || !(size > 0)) return body;
    body += chunked.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}
