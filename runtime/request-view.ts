import type { IncomingHttpHeaders } from 'node:http';

/**
 * What hub reads of an arrived request apart from its body: the request line, the headers, and
 * where it came from. An `IncomingMessage` is one; so is a plain object, which is how the paid
 * path's decisions (proxy/paid-call/pay-request.ts, the identity headers, payment proofs) are
 * tested without a socket.
 */
export type RequestView = {
  method?: string | undefined;
  url?: string | undefined;
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string | undefined; encrypted?: boolean };
};
