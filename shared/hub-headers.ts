import type { IncomingHttpHeaders } from 'node:http';

/**
 * Every `hub-*` header (spec: Headers on proxied requests, Response to the agent, Seller account
 * endpoint), in one table for the proxy that sets them and the SDK that reads them. Node lower-cases
 * incoming header names, so these are the keys to read.
 */
export const HUB_HEADERS = {
  // Set by hub on the request it forwards to the seller.
  signature: 'hub-signature',
  requestId: 'hub-request-id',
  agentId: 'hub-agent-id',
  /** Same value as the agent id, present in the same cases; not signed, so never read for identity. */
  anonymousId: 'hub-anonymous-id',
  /** Not covered by the signature (see `accountsFor`). */
  buyerId: 'hub-buyer-id',
  /** The spec names "a buyer-email header" on account routes without spelling it; hub sends this one. */
  buyerEmail: 'hub-buyer-email',
  sandbox: 'hub-sandbox',
  // Sent by the agent.
  /** `free` draws on the buyer's included units instead of a payment. */
  mode: 'hub-mode',
  // Set by the seller on its response.
  /** Usage to settle synchronously. */
  usage: 'hub-usage',
  // Set by hub on the response to the agent.
  billing: 'hub-billing',
  usageError: 'hub-usage-error',
  usageAdjusted: 'hub-usage-adjusted',
} as const;

/**
 * One header's value, or undefined when it is absent. Node joins a repeated custom header with
 * ", ", which then fails whatever check the value is for; an array (only set-cookie) counts as absent.
 */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}
