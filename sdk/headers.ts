import type { IncomingHttpHeaders } from 'node:http';
import { AGENT_ID_HEADER, REQUEST_ID_HEADER, SIGNATURE_HEADER } from '../shared/signature.js';

/**
 * The `hub-*` headers a seller receives and sends (spec: Headers on proxied requests, Seller
 * account endpoint). Node lower-cases incoming header names, so these are the keys to read.
 */
export const HUB_HEADERS = {
  signature: SIGNATURE_HEADER,
  requestId: REQUEST_ID_HEADER,
  agentId: AGENT_ID_HEADER,
  /** Same value as the agent id, present in the same cases; not signed, so never read for identity. */
  anonymousId: 'hub-anonymous-id',
  /** Not covered by the signature (see `accountsFor`). */
  buyerId: 'hub-buyer-id',
  /** The spec names "a buyer-email header" on account routes without spelling it; hub sends this one. */
  buyerEmail: 'hub-buyer-email',
  sandbox: 'hub-sandbox',
  /** Response header: usage to settle synchronously. */
  usage: 'hub-usage',
} as const;

/**
 * One header's value, or undefined when it is absent. Node joins a repeated custom header with
 * ", ", which then fails whatever check the value is for; an array (only set-cookie) counts as absent.
 */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}
