import { isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { decodeContent } from '../../runtime/content-encoding.js';
import { mediaTypeOf } from '../../runtime/media-type.js';
import { readUpTo } from '../../runtime/read-body.js';
import { portOf, type Resolve, type ResolvedAddress, UpstreamAddresses } from '../../runtime/upstream-addresses.js';
import { ApiError } from '../../shared/errors.js';
import { type OwnedHosts, ownerOf } from './owned-hosts.js';

export { type Resolve, type ResolvedAddress, resolveWithSystem } from '../../runtime/upstream-addresses.js';

/**
 * Fetches a page of a seller's site for agentify, trusting nothing about it: every hop (the first
 * URL and each redirect, followed by hand) must be at an origin the organization's sellers own,
 * redirects on the host first asked for only (owned-hosts.ts); the names are resolved once,
 * checked (runtime/upstream-addresses.ts, the policy every upstream connection keeps) and the
 * connection is pinned to the checked addresses, so a name cannot answer differently between the
 * check and the connect; the
 * whole exchange has one deadline and the body a size cap, compressed or not.
 */
export type PageLimits = {
  /** Largest page taken, in bytes after decompression. */
  maxBytes: number;
  /** For the whole fetch, redirects included. */
  timeoutMs: number;
  maxRedirects: number;
  /** Where hub connects: the installation's policy; without one, loopback and private addresses are allowed and no port is hub's. */
  addresses?: UpstreamAddresses;
};

const DEFAULT_ADDRESSES = new UpstreamAddresses();

export type FetchedPage = { url: URL; sellerId: string; html: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

export async function fetchOwnedPage(start: URL, hosts: OwnedHosts, resolve: Resolve, limits: PageLimits): Promise<FetchedPage> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  let url = start;
  for (let hop = 0; ; hop++) {
    const owner = ownerOf(hosts, url, hop === 0 ? undefined : start);
    const addresses = await addressesOf(url.hostname, resolve, deadline, limits);
    refuseAddresses(url, addresses, owner.mayBeInternal, limits.addresses ?? DEFAULT_ADDRESSES);
    const answer = await get(url, addresses, deadline, limits);
    if (answer.kind === 'page') return { url, sellerId: owner.sellerId, html: answer.html };
    if (hop >= limits.maxRedirects) throw new ApiError('page_unreachable', `The page redirects more than ${limits.maxRedirects} times.`);
    url = answer.location;
  }
}

async function addressesOf(hostname: string, resolve: Resolve, deadline: AbortSignal, limits: PageLimits): Promise<ResolvedAddress[]> {
  const literal = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  const family = isIP(literal);
  if (family) return [{ address: literal, family }];
  try {
    const addresses = await Promise.race([resolve(hostname), aborted(deadline)]);
    if (addresses.length > 0) return addresses;
  } catch (err) {
    if (deadline.aborted) throw timedOut(limits);
    throw new ApiError('page_unreachable', `${hostname} does not resolve (${(err as { code?: string }).code ?? 'lookup failed'}).`);
  }
  throw new ApiError('page_unreachable', `${hostname} does not resolve.`);
}

/**
 * The upstream policy, and stricter for a custom hostname: public by definition, so an internal
 * answer for one is someone pointing hub at its own network; only an upstream host may be internal.
 */
function refuseAddresses(url: URL, addresses: ResolvedAddress[], mayBeInternal: boolean, policy: UpstreamAddresses): void {
  const port = portOf(url);
  for (const { address } of addresses) {
    const refusal = policy.refusal(address, port, mayBeInternal && policy.privateAllowed);
    if (!refusal) continue;
    if (!mayBeInternal) {
      throw new ApiError('page_host_not_owned', `${url.hostname} resolves to an internal address; only a seller’s upstream host may.`);
    }
    throw new ApiError('page_host_not_owned', `${url.hostname} resolves to ${address}; ${refusal.reason}, and hub does not fetch from it.`);
  }
}

type Answer = { kind: 'page'; html: string } | { kind: 'redirect'; location: URL };

async function get(url: URL, addresses: ResolvedAddress[], deadline: AbortSignal, limits: PageLimits): Promise<Answer> {
  const dispatcher = new Agent({ connect: { lookup: pinnedLookup(addresses) }, connections: 1 });
  try {
    const res = await request(url, {
      method: 'GET',
      dispatcher,
      signal: deadline,
      headers: {
        accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1',
        'accept-encoding': 'gzip, deflate, br',
        'user-agent': 'hub-agentify/1 (markdown of this site for agents)',
      },
    });
    if (REDIRECTS.has(res.statusCode)) {
      discard(res.body);
      return { kind: 'redirect', location: redirectTarget(url, header(res.headers, 'location')) };
    }
    if (res.statusCode < 200 || res.statusCode > 299) {
      discard(res.body);
      throw new ApiError('page_unreachable', `The page answered ${res.statusCode}.`, { pageStatus: res.statusCode });
    }
    const contentType = header(res.headers, 'content-type');
    const mediaType = mediaTypeOf(contentType);
    if (mediaType && !HTML_TYPES.has(mediaType)) {
      discard(res.body);
      throw new ApiError('page_not_html', `The page is ${mediaType}; agentify converts text/html.`, { contentType: mediaType });
    }
    if (Number(header(res.headers, 'content-length') ?? 0) > limits.maxBytes) {
      discard(res.body);
      throw tooLarge(limits);
    }
    const { bytes, complete } = await readUpTo(res.body, limits.maxBytes);
    if (!complete) throw tooLarge(limits);
    const body = decompress(bytes, header(res.headers, 'content-encoding'), limits);
    if (!mediaType && !looksLikeHtml(body))
      throw new ApiError('page_not_html', 'The page names no content type and does not start as HTML.');
    return { kind: 'page', html: decodeText(body, contentType) };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (deadline.aborted) throw timedOut(limits);
    const e = err as { code?: string; cause?: { code?: string } };
    throw new ApiError('page_unreachable', `The connection to ${url.host} failed (${e.code ?? e.cause?.code ?? 'network error'}).`);
  } finally {
    dispatcher.destroy().catch(() => {});
  }
}

/** Connects only to the addresses already checked: DNS is not asked again between check and connect. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) return (callback as (err: null, all: ResolvedAddress[]) => void)(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  };
}

function redirectTarget(from: URL, location: string | undefined): URL {
  let target: URL;
  try {
    if (!location) throw new TypeError('no location');
    target = new URL(location, from);
  } catch {
    throw new ApiError('page_unreachable', 'The page redirects without a usable Location.');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new ApiError('page_host_not_owned', `The page redirects to a ${target.protocol} URL.`);
  }
  target.hash = '';
  return target;
}

function decompress(bytes: Buffer, encoding: string | undefined, limits: PageLimits): Buffer {
  const decoded = decodeContent(bytes, encoding, limits.maxBytes);
  if (decoded.ok) return decoded.bytes;
  if (decoded.why === 'too_large') throw tooLarge(limits);
  if (decoded.why === 'corrupt') throw new ApiError('page_unreachable', `The page's ${decoded.coding} body does not decompress.`);
  throw new ApiError('page_unreachable', `The page is sent with an unsupported content-encoding (${decoded.coding}).`);
}

function looksLikeHtml(body: Buffer): boolean {
  const start = body
    .subarray(0, 512)
    .toString('latin1')
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, '')
    .trimStart()
    .toLowerCase();
  return start.startsWith('<!doctype html') || start.startsWith('<html') || start.startsWith('<!--') || start.startsWith('<head');
}

/** The charset the header names, else a `<meta>` in the first kilobyte names, else UTF-8. */
function decodeText(body: Buffer, contentType: string | undefined): string {
  const declared =
    /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType ?? '')?.[1] ??
    /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(body.subarray(0, 1024).toString('latin1'))?.[1];
  try {
    return new TextDecoder(declared ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/** Drops a body not wanted; its abort error has no reader to go to. */
function discard(body: { on(event: 'error', listener: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => {});
  body.destroy();
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
}

function timedOut(limits: PageLimits): ApiError {
  return new ApiError('page_unreachable', `The page did not arrive within ${limits.timeoutMs / 1000} s.`);
}

function tooLarge(limits: PageLimits): ApiError {
  return new ApiError('page_too_large', `Pages are converted up to ${limits.maxBytes} bytes.`, { limitBytes: limits.maxBytes });
}
