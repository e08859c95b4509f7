import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { HUB_HEADERS, headerValue } from '../shared/hub-headers.js';
import { isId } from '../shared/ids.js';

/**
 * Who a verified request comes from (spec: Headers on proxied requests › Identity combinations):
 *
 * - no agent id: a signed anonymous probe;
 * - agent id only: an anonymous agent, billable, with no known owner;
 * - agent id and buyer id: the agent belongs to that buyer.
 *
 * The signature covers the agent id but not the buyer id. So a buyer id arriving without an agent
 * id is dropped here, and one arriving with an agent id unlocks the buyer's accounts only where a
 * signed account write or mint tied that agent to that buyer (`accountsFor`).
 */
export type HubIdentity = {
  /** `hub-request-id`: pass it to the usage API as `zcRequestId`. */
  requestId: string;
  /** `hub-agent-id`, covered by the signature; undefined on a signed anonymous probe. */
  agentId: string | undefined;
  /** `hub-buyer-id` when it came with an agent id; not signed, see above. */
  buyerId: string | undefined;
  /** `sb=1` in the signature header: sandbox test traffic. */
  sandbox: boolean;
  /** The signing secret that verified the request. */
  kid: string;
  /** The signature's `t`, unix seconds. */
  signedAt: number;
};

export function identityFrom(headers: IncomingHttpHeaders, signature: { kid: string; sandbox: boolean; timestamp: number }): HubIdentity {
  const agentId = headerValue(headers, HUB_HEADERS.agentId) || undefined;
  const buyerId = headerValue(headers, HUB_HEADERS.buyerId);
  return {
    requestId: headerValue(headers, HUB_HEADERS.requestId) ?? '',
    agentId,
    buyerId: agentId !== undefined && isId('buyer', buyerId) ? buyerId : undefined,
    sandbox: signature.sandbox,
    kid: signature.kid,
    signedAt: signature.timestamp,
  };
}

// The adapters verify a request once and leave the identity here, keyed by the request object, so
// the seller's handlers can read it whatever framework wraps the request.
const verified = new WeakMap<IncomingMessage, HubIdentity>();

export function rememberIdentity(req: IncomingMessage, identity: HubIdentity): void {
  verified.set(req, identity);
}

/**
 * The verified identity of a request that passed hub's middleware (node, Express or Fastify),
 * or undefined when it did not pass through it.
 */
export function hubIdentity(req: IncomingMessage | { raw: IncomingMessage }): HubIdentity | undefined {
  return verified.get('raw' in req ? req.raw : req);
}
