import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { rememberIdentity } from './identity.js';
import { rejection } from './rejection.js';
import { readAndCheck, type VerifyOptions } from './verify-request.js';

/**
 * A Fastify `preParsing` hook that verifies hub's signature:
 * `app.addHook('preParsing', hubFastify({ secrets }))`. It reads the raw body, verifies, then
 * hands Fastify a fresh stream of the same bytes, so content-type parsers work as before. Read the
 * identity with `hubIdentity(request)`.
 */
export function hubFastify(options: VerifyOptions) {
  return async function hubSignature(
    request: FastifyRequest,
    reply: FastifyReply,
    payload: NodeJS.ReadableStream,
  ): Promise<NodeJS.ReadableStream | undefined> {
    const raw = request.raw;
    // The request target as received: Fastify's rewriteUrl changes raw.url and keeps it here.
    const received = (raw as { originalUrl?: string }).originalUrl ?? raw.url ?? request.url;
    const checked = await readAndCheck(
      payload as Readable,
      { method: raw.method ?? request.method, url: received, headers: raw.headers },
      options,
    );
    if (!checked.ok) {
      const { status, body } = rejection(checked.failure, 'api');
      reply.code(status).type('application/json; charset=utf-8').send(body);
      // Fastify stops before the handler only once the reply has ended: with an async onSend
      // hook of the seller's it would not have yet, and the handler would run unverified.
      await ended(reply.raw);
      return undefined;
    }
    rememberIdentity(raw, checked.identity);
    const replay = Readable.from([checked.body]) as Readable & { receivedEncodedLength?: number };
    replay.receivedEncodedLength = checked.body.length;
    return replay;
  };
}

function ended(res: FastifyReply['raw']): Promise<void> {
  if (res.writableEnded || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    res.once('finish', resolve);
    res.once('close', resolve);
  });
}
