import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { guardFor } from '../../runtime/containment.js';
import { mediaTypeOf } from '../../runtime/media-type.js';
import type { ProxyMetrics } from '../metrics.js';

/**
 * Sends the seller's response to the agent: the head as given, then the body streamed chunk by
 * chunk as it arrives (server-sent events are never buffered). Resolves once the response ended
 * or the agent went away; a body that breaks off cuts the agent's connection.
 */
export async function deliver(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | string[]>,
  body: Readable | Buffer,
  metrics: ProxyMetrics,
): Promise<void> {
  res.writeHead(status, headers);
  if (Buffer.isBuffer(body)) {
    // Already whole (an encrypted answer): one write, done when the agent has it or has gone.
    await new Promise<void>((resolve) => {
      res.once('close', resolve);
      res.end(body, resolve);
    });
    return;
  }
  // The head normally leaves with the first body chunk (one write, not two); an event stream may
  // stay quiet for a while, so its head goes out at once.
  if (mediaTypeOf(String(headers['content-type'] ?? '')) === 'text/event-stream') res.flushHeaders();
  try {
    await streamBody(body, res);
  } catch (err) {
    if ((err as { code?: string }).code === 'UND_ERR_BODY_TIMEOUT') metrics.upstreamError('body_timeout');
    res.destroy();
  }
}

/**
 * Copies the upstream body to the agent chunk by chunk, as it arrives, pausing the upstream while
 * the agent's socket is full. (stream.pipeline does the same with an AbortController per call,
 * which is measurable at proxy request rates.) Resolves when the response has ended; rejects if
 * the upstream breaks off, and stops reading if the agent goes away.
 */
function streamBody(body: Readable, res: ServerResponse): Promise<void> {
  // What the seller's stream throws at its listeners is this request's failure alone.
  guardFor(res, body);
  // Listeners are written inline: a named per-request closure costs a name-keeping call under tsx.
  return new Promise((resolve, reject) => {
    body.on('data', (chunk: Buffer) => {
      if (!res.write(chunk)) body.pause();
    });
    body.once('end', () => res.end(resolve));
    body.once('error', reject);
    res.on('drain', () => body.resume());
    res.once('close', () => {
      if (!res.writableFinished) body.destroy();
      resolve();
    });
  });
}
