import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/**
 * A body decoded from its `Content-Encoding` (one of gzip, deflate, br, or none), to at most
 * `maxBytes`; undefined when the coding is another, stacked, or the bytes do not decode within
 * the limit. For the few bodies hub reads itself rather than passes on.
 */
export function decodeContent(bytes: Buffer, contentEncoding: string | string[] | undefined, maxBytes: number): Buffer | undefined {
  const coding = typeof contentEncoding === 'string' ? contentEncoding.trim().toLowerCase() : contentEncoding;
  if (coding === undefined || coding === '' || coding === 'identity') return bytes;
  const decode = typeof coding === 'string' ? DECODERS[coding] : undefined;
  if (!decode) return undefined;
  try {
    return decode(bytes, { maxOutputLength: maxBytes });
  } catch {
    return undefined; // corrupt, or larger than the limit
  }
}

const DECODERS: Record<string, (bytes: Buffer, options: { maxOutputLength: number }) => Buffer> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};
