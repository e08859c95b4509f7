import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError, sendJson } from '../runtime/respond.js';
import { type HubIdentity, rememberIdentity } from './identity.js';
import { rejection } from './rejection.js';
import { ALLOWANCE_UNAVAILABLE_STATUS, AllowanceUnavailableError, allowanceUnavailableBody } from './usage-errors.js';
import { readAndCheck, type VerifyOptions } from './verify-request.js';

export { sendError, sendJson };

export type VerifiedRequest = { identity: HubIdentity; body: Buffer };
export type HubRequestHandler = (req: IncomingMessage, res: ServerResponse, verified: VerifiedRequest) => unknown;

/**
 * Wraps a `node:http` request handler: reads the body, verifies hub's signature and answers 401
 * `{ error: "invalid_zeroclick_signature" }` before the handler sees anything. The handler gets
 * the verified identity and the raw body bytes (the stream is consumed by then). An
 * `AllowanceUnavailableError` the handler throws (the usage client's `failClosed` policy) is
 * answered `503 { error: "allowance_unavailable" }`, as the spec asks of the seller's API.
 */
export function withHubSignature(
  handler: HubRequestHandler,
  options: VerifyOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    try {
      const checked = await readAndCheck(req, { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }, options);
      if (!checked.ok) {
        const { status, body } = rejection(checked.failure, 'api');
        sendJson(res, status, body);
        return;
      }
      rememberIdentity(req, checked.identity);
      await handler(req, res, { identity: checked.identity, body: checked.body });
    } catch (err) {
      if (err instanceof AllowanceUnavailableError && !res.headersSent)
        sendJson(res, ALLOWANCE_UNAVAILABLE_STATUS, allowanceUnavailableBody());
      else sendError(res, err);
    }
  };
}
