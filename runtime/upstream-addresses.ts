import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Agent, type Dispatcher } from 'undici';
import { type AddressScope, addressScope } from '../shared/address-ranges.js';
import type { HubConfig } from '../shared/config.js';
import { within } from './within.js';

/**
 * Where hub connects on a seller's say-so (its API, its account endpoint, agentify's pages): the
 * one policy, checked when a URL is stored and again for every address a name resolves to when a
 * connection is made (a name can answer differently later).
 *
 * - Never hub's own listeners (the control-plane's and the proxy's ports on this machine, the
 *   control-plane's URL, any host under the pay domain): a request would loop through hub.
 * - Never link-local addresses or cloud metadata names: the metadata service hands out the
 *   machine's credentials to whoever asks.
 * - Loopback and private addresses only while `HUB_PRIVATE_UPSTREAMS` is on (the default: hub
 *   usually runs beside the seller's API). A multi-tenant installation turns it off.
 */

export type ResolvedAddress = { address: string; family: number };
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

export const resolveWithSystem: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Why hub will not connect somewhere: a loop through hub itself, a metadata address, or a private one it was told to avoid. */
export type AddressRefusal = { kind: 'loop' | 'link-local' | 'private'; reason: string };

/** The code a connection refused by the policy fails with; `refusal` says why. */
export const ADDRESS_REFUSED = 'HUB_ADDRESS_REFUSED';
export type AddressRefusedError = Error & { code: typeof ADDRESS_REFUSED; refusal: AddressRefusal };

/** Cloud metadata services by name, refused whatever they resolve to. */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

/** How long a URL's check waits for its name to resolve; one that does not is checked again at connect. */
const RESOLVE_WITHIN_MS = 2_000;

export type AddressPolicySettings = {
  /** Loopback and private addresses may be connected to. */
  privateAllowed: boolean;
  /** The ports hub listens on, on this machine. */
  ownPorts: readonly number[];
  /** Other `host:port` pairs that are hub (the control-plane's URL). */
  ownEndpoints: readonly string[];
  /** Every host under it is a pay URL of this hub. */
  payDomain: string | undefined;
};

export class UpstreamAddresses {
  readonly privateAllowed: boolean;
  private readonly ownPorts: ReadonlySet<number>;
  private readonly ownEndpoints: ReadonlySet<string>;
  private readonly payDomain: string | undefined;
  /** This machine's interface addresses: hub's ports answer on them when it binds to all. */
  private readonly localAddresses: ReadonlySet<string>;

  constructor(
    settings: Partial<AddressPolicySettings> = {},
    readonly resolve: Resolve = resolveWithSystem,
  ) {
    this.privateAllowed = settings.privateAllowed ?? true;
    this.ownPorts = new Set(settings.ownPorts);
    this.ownEndpoints = new Set(settings.ownEndpoints);
    this.payDomain = settings.payDomain;
    this.localAddresses = new Set(
      Object.values(networkInterfaces())
        .flat()
        .map((i) => i?.address.toLowerCase() ?? ''),
    );
  }

  /** Why hub will not connect to `address` (an IP literal) at `port`; undefined when it may. */
  refusal(address: string, port: number, privateAllowed = this.privateAllowed): AddressRefusal | undefined {
    const scope = addressScope(address);
    if (scope === undefined) return { kind: 'link-local', reason: `${address} is not an IP address` };
    if (this.isOwnListener(address, scope, port)) {
      return { kind: 'loop', reason: `${endpoint(address, port)} is this hub's own listener, so requests would loop through it` };
    }
    if (scope === 'link-local') return { kind: 'link-local', reason: `${address} is link-local, where cloud metadata services answer` };
    if (scope !== 'public' && !privateAllowed) return { kind: 'private', reason: `${address} is a ${scope} address` };
    return undefined;
  }

  /**
   * Why a URL hub is asked to store as a place to connect to is refused: by its name (metadata
   * names, the pay domain, `localhost`), its IP literal, or what its name resolves to now. A name
   * that does not resolve (yet) passes: the connection checks it again.
   */
  async urlRefusal(url: URL, privateAllowed = this.privateAllowed): Promise<AddressRefusal | undefined> {
    const host = hostnameOf(url);
    const port = portOf(url);
    if (METADATA_NAMES.has(host)) return { kind: 'link-local', reason: `${host} is a cloud metadata service` };
    if (this.payDomain && (host === this.payDomain || host.endsWith(`.${this.payDomain}`))) {
      return { kind: 'loop', reason: `${host} is a pay URL of this hub, so requests would loop through it` };
    }
    if (this.ownEndpoints.has(endpoint(host, port))) {
      return { kind: 'loop', reason: `${endpoint(host, port)} is this hub's control-plane` };
    }
    // Names under .localhost are this machine (RFC 6761), though not every resolver answers them.
    const literal = isIP(host) ? host : host.endsWith('.localhost') ? '127.0.0.1' : undefined;
    if (literal) return this.refusal(literal, port, privateAllowed);
    const addresses = await within(this.resolve(host), RESOLVE_WITHIN_MS).catch(() => undefined);
    for (const { address } of addresses ?? []) {
      const refusal = this.refusal(address, port, privateAllowed);
      if (refusal) return { ...refusal, reason: `${host} resolves to ${address}; ${refusal.reason}` };
    }
    return undefined;
  }

  /**
   * A `lookup` for connections to `port` that resolves the name and fails, `ADDRESS_REFUSED`,
   * when any address it answers is refused; otherwise the connection goes to those addresses.
   */
  connectLookup(port: number): LookupFunction {
    return (hostname, options, callback) => {
      this.resolve(hostname).then(
        (resolved) => {
          const addresses = options.family ? resolved.filter((a) => a.family === options.family) : resolved;
          for (const { address } of addresses) {
            const refusal = this.refusal(address, port);
            if (refusal)
              return callback(refusedError({ ...refusal, reason: `${hostname} resolves to ${address}; ${refusal.reason}` }), '', 0);
          }
          const first = addresses[0];
          if (!first) return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), '', 0);
          if (options.all) return (callback as unknown as (err: null, all: ResolvedAddress[]) => void)(null, addresses);
          callback(null, first.address, first.family);
        },
        (err: NodeJS.ErrnoException) => callback(err, '', 0),
      );
    };
  }

  /**
   * How a call to `url` made outside the proxy's pools (a seller's account endpoint) keeps this
   * policy when it connects: a literal the policy refuses is refused before any connection; a
   * name goes through `connectLookup`, one undici agent a port.
   */
  outbound(url: URL): { dispatcher: Dispatcher } | { refusal: AddressRefusal } {
    const host = hostnameOf(url);
    const port = portOf(url);
    if (isIP(host)) {
      const refusal = this.refusal(host, port);
      if (refusal) return { refusal };
    }
    const known = this.agents.get(port);
    if (known) return { dispatcher: known };
    const agent = new Agent({ connect: { lookup: this.connectLookup(port) } });
    this.agents.set(port, agent);
    return { dispatcher: agent };
  }

  private readonly agents = new Map<number, Agent>();

  private isOwnListener(address: string, scope: AddressScope, port: number): boolean {
    if (this.ownEndpoints.has(endpoint(address, port))) return true;
    return this.ownPorts.has(port) && (scope === 'loopback' || this.localAddresses.has(address.toLowerCase()));
  }
}

export function refusedError(refusal: AddressRefusal): AddressRefusedError {
  return Object.assign(new Error(refusal.reason), { code: ADDRESS_REFUSED, refusal } as const);
}

/** The policy of this configuration: one per config object, shared by whatever asks. */
const policies = new WeakMap<HubConfig, UpstreamAddresses>();

export function upstreamAddressesOf(config: HubConfig): UpstreamAddresses {
  let policy = policies.get(config);
  if (!policy) {
    const controlPlane = new URL(config.controlPlane.url);
    policy = new UpstreamAddresses({
      privateAllowed: config.privateUpstreams,
      ownPorts: [config.controlPlane.port, config.proxy.port],
      ownEndpoints: [endpoint(hostnameOf(controlPlane), portOf(controlPlane))],
      payDomain: config.payDomain,
    });
    policies.set(config, policy);
  }
  return policy;
}

/** The URL's host as a name or bare IP literal: lower case, without brackets or a final dot. */
export function hostnameOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/** The URL's port, the scheme's default written out. */
export function portOf(url: URL): number {
  return Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
}

function endpoint(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}
