import { createHmac } from 'node:crypto';

/**
 * Loop detection with `CDN-Loop` (RFC 8586): every request the proxy forwards carries this
 * installation's mark appended to the field, and a request that arrives carrying it has come back
 * through a seller's upstream (or a chain of them) to a hub that already forwarded it. Entries of
 * others (CDNs, other hub installations) are kept, so a loop through several of them is seen by
 * the first one it reaches twice; a chain that only passes through another hub is not a loop.
 * An agent may add entries too: that can only get its own request refused, never unmark one.
 */
export const LOOP_FIELD = 'cdn-loop';

/** The installation's mark: the same on every proxy sharing the internal token, opaque to sellers. */
export function loopMarkOf(internalToken: string): string {
  return `hub-${createHmac('sha256', internalToken).update('hub loop mark v1').digest('hex').slice(0, 16)}`;
}

/** Whether the field, as received, lists `mark` among its entries (each `id` or `id; params`). */
export function carriesLoopMark(field: string | string[] | undefined, mark: string): boolean {
  // Most requests carry no field; most that do carry other marks.
  if (field === undefined || !String(field).includes(mark)) return false;
  return String(field)
    .split(',')
    .some((entry) => entry.split(';', 1)[0]!.trim() === mark);
}

/** The field to forward: what arrived, then this installation's mark. */
export function withLoopMark(field: string | string[] | undefined, mark: string): string {
  const prior = Array.isArray(field) ? field.join(', ') : field?.trim();
  return prior ? `${prior}, ${mark}` : mark;
}
