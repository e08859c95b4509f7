import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../shared/errors.js';

/**
 * What a pay URL request line and Host header may be. hub forwards the target unnormalized (the
 * signature covers it byte for byte) under the seller's base path, so a target the seller's
 * server could resolve above that base path, or route by something other than its Host, is
 * refused here with a 400, before anything is routed, read or forwarded.
 */

/** A Host header: a DNS name or an IP literal, and an optional decimal port. */
const HOST_HEADER = /^(?:\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::[0-9]{1,5})?$/i;

/** The characters that can spell a dot-segment or a separator, raw or percent-encoded. */
const MAY_HOLD_DOT_SEGMENT = /[.%\\]/;

export function assertServableTarget(req: IncomingMessage): void {
  const target = req.url ?? '';
  // Origin-form only: absolute-form (`GET http://other/x`), authority-form and `*` name no path
  // under the seller's API, and a seller's server would route absolute-form by its own authority.
  if (target.charCodeAt(0) !== 47 /* / */) throw refusal('The request target must be a path (origin-form), such as /v1/items?q=1');
  if (target.includes('#')) throw refusal('The request target must not carry a fragment');

  const host = req.headers.host;
  if (host !== undefined && host !== '' && !isHostHeader(host)) throw refusal('The Host header is not a host name with an optional port');
  if (hasDuplicateHost(req.rawHeaders)) throw refusal('The request carries more than one Host header');

  const queryAt = target.indexOf('?');
  const path = queryAt < 0 ? target : target.slice(0, queryAt);
  if (MAY_HOLD_DOT_SEGMENT.test(path) && climbsAboveRoot(path)) {
    throw refusal('The request path climbs above the root with dot-segments');
  }
}

export function isHostHeader(value: string): boolean {
  return HOST_HEADER.test(value);
}

function refusal(reason: string): ApiError {
  return new ApiError('invalid_request', reason);
}

function hasDuplicateHost(rawHeaders: string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

/**
 * Whether some reading of the path walks above its root, read as permissively as any server
 * might: `%2e`, `%2f` and `%5c` decoded, `\` taken as a separator, `;parameters` stripped from a
 * segment (as Java servers do), and empty segments not counted (as servers that merge slashes
 * do). A path that stays below its root under every such reading is forwarded as sent.
 */
function climbsAboveRoot(path: string): boolean {
  const decoded = path.replace(/%(2e|2f|5c)/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  let depth = 0;
  for (const raw of decoded.split(/[/\\]/)) {
    const segment = raw.split(';', 1)[0]!;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (depth === 0) return true;
      depth--;
    } else depth++;
  }
  return false;
}
