import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/** A `Content-Encoding` value, trimmed and lower-cased; `identity` without the header. Stacked codings stay as sent. */
export function contentCoding(header: string | string[] | undefined): string {
  if (header === undefined) return 'identity';
  return (Array.isArray(header) ? header.join(',') : header).trim().toLowerCase();
}

export type Decoded = { ok: true; bytes: Buffer } | { ok: false; coding: string; why: 'unsupported' | 'too_large' | 'corrupt' };

/**
 * A body decoded from its `Content-Encoding` (gzip, deflate, br, or none), to at most `maxBytes`.
 * For the few bodies hub reads itself rather than passes on.
 */
export function decodeContent(bytes: Buffer, header: string | string[] | undefined, maxBytes: number): Decoded {
  const coding = contentCoding(header);
  if (coding === 'identity' || coding === '') return { ok: true, bytes };
  const decode = DECODERS[coding];
  if (!decode) return { ok: false, coding, why: 'unsupported' };
  try {
    return { ok: true, bytes: decode(bytes, { maxOutputLength: maxBytes }) };
  } catch (err) {
    return { ok: false, coding, why: (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' ? 'too_large' : 'corrupt' };
  }
}

const DECODERS: Partial<Record<string, (bytes: Buffer, options: { maxOutputLength: number }) => Buffer>> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};
