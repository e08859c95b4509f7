import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PageViewReporter } from './reporter.js';

/**
 * A Fastify `onRequest` hook that reports the pages the app serves to hub:
 * `app.addHook('onRequest', pageViewsFastify(reporter))` on the root instance, so it covers every
 * route and the not-found handler. The path is the target as received, also under `rewriteUrl`.
 */
export function pageViewsFastify(reporter: PageViewReporter) {
  return async function reportPageViews(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const raw = request.raw;
    reporter.track(raw, reply.raw, (raw as { originalUrl?: string }).originalUrl ?? raw.url);
  };
}
