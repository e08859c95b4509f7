import type { NextFunction, Request, Response } from 'express';
import { contentCoding } from '../runtime/content-encoding.js';
import { sendJson } from '../runtime/respond.js';
import { rememberIdentity } from './identity.js';
import { rejection } from './rejection.js';
import { checkSignedRequest, readAndCheck, type VerifyOptions } from './verify-request.js';

/**
 * Express middleware that verifies hub's signature. Mount it before any body parser: it reads
 * the raw body itself (the signature covers its bytes) and, like `express.raw()`, leaves them in
 * `req.body` as a Buffer. If `express.raw()` already ran, its Buffer is used, unless it inflated a
 * compressed body (hub signed the bytes as sent). Read the identity with `hubIdentity(req)`.
 */
export function hubExpress(options: VerifyOptions) {
  return async function hubSignature(req: Request, res: Response, next: NextFunction): Promise<void> {
    try {
      // A router strips its mount path from req.url; the signature covers the original target.
      const parts = { method: req.method, url: req.originalUrl || req.url, headers: req.headers };
      if (Buffer.isBuffer(req.body) && inflated(req, req.body)) {
        next(new Error('hubExpress needs a compressed body as sent: mount it before express.raw(), which inflates it'));
        return;
      }
      const checked = Buffer.isBuffer(req.body)
        ? withBody(checkSignedRequest({ ...parts, body: req.body }, options), req.body)
        : req.readableEnded
          ? undefined
          : await readAndCheck(req, parts, options);
      if (checked === undefined) {
        next(new Error('hubExpress needs the raw body: mount it before express.json() and other body parsers'));
        return;
      }
      if (!checked.ok) {
        const { status, body } = rejection(checked.failure, 'api');
        sendJson(res, status, body);
        return;
      }
      rememberIdentity(req, checked.identity);
      req.body = checked.body;
      next();
    } catch (err) {
      next(err);
    }
  };
}

function withBody<T extends { ok: boolean }>(checked: T, body: Buffer): T & { body: Buffer } {
  return { ...checked, body };
}

/**
 * Mounts a `node:http` style handler that returns whether it handled the request (such as the
 * account endpoint's `handle`) in Express; unhandled requests go on to the next route.
 */
export function expressRoute(handle: (req: Request, res: Response) => Promise<boolean>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    handle(req, res).then((handled) => handled || next(), next);
  };
}

/** Whether a parser decoded a compressed body: its bytes are no longer those the sender counted. */
function inflated(req: Request, body: Buffer): boolean {
  if (contentCoding(req.headers['content-encoding']) === 'identity') return false;
  const declared = req.headers['content-length'];
  return declared === undefined || Number(declared) !== body.length;
}
