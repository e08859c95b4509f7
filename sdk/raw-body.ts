import type { Readable } from 'node:stream';

/** 1 MiB: the signature covers the whole body, so it is held in memory to be hashed. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/**
 * Reads a whole request body as raw bytes, refusing more than `maxBytes`. On refusal the rest of
 * the body is drained, not destroyed, so the connection stays open to carry the 413.
 */
export function readRawBody(stream: Readable, maxBytes = DEFAULT_MAX_BODY_BYTES, declaredLength?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = () => {
      cleanup();
      stream.resume();
      reject(new BodyTooLargeError(`the body is larger than ${maxBytes} bytes`));
    };
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer | string) => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buf.length;
      if (size > maxBytes) return tooLarge();
      chunks.push(buf);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onClose = () => onError(new Error('the request was aborted before its body ended'));
    function cleanup() {
      stream.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    }
    // A stream read to its end already (by a body parser mounted first) would never end again.
    if (stream.readableEnded) {
      return reject(new Error('the request body was read already: verify hub’s signature before any body parser runs'));
    }
    if (declaredLength !== undefined && Number(declaredLength) > maxBytes) return tooLarge();
    stream.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}
