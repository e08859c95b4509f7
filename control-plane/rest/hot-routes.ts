import type { IncomingMessage, ServerResponse } from 'node:http';
import { readJsonBody } from '../../runtime/json-body.js';
import { sendJson } from '../../runtime/respond.js';
import { ApiError } from '../../shared/errors.js';
import { describeIssues } from '../../shared/validation-message.js';
import { authorizeApiKey } from '../auth/authorize.js';
import { pageViewsRoute } from '../page-views/page-views.js';
import type { RouteServices, ServedRoute } from '../trpc/served-route.js';
import { checkUsageRoute } from '../usage/check.js';
import { credentialCache } from '../usage/credential-cache.js';
import { reportUsageRoute } from '../usage/report.js';

/**
 * The routes a seller calls on every request its API serves or every page its site shows (the
 * usage check and report, page views), served straight from node:http. They answer exactly as
 * the REST binding does (same body reading, credential and scope checks, validation messages,
 * envelope; their procedures still describe them in the OpenAPI document) but skip the generic
 * machinery around a procedure, which costs several times the work itself, and remember API keys
 * for a few seconds (usage/credential-cache.ts).
 *
 * Each route is defined once (trpc/served-route.ts): its path, scope, input and work are the same
 * object its REST procedure is built from. The control-plane's server puts them ahead of the REST
 * API with one line:
 *   if (hot.serves(req.method, path)) return hot.handle(req, res, path);
 */
const ROUTES = new Map<string, ServedRoute>([checkUsageRoute, reportUsageRoute, pageViewsRoute].map((route) => [route.path, route]));

export type HotRoutes = {
  /** POST to one of their paths; any other method there is left to the REST API (405). */
  serves(method: string | undefined, path: string): boolean;
  /** Answers the request; throws what the server turns into the envelope (and logs when a 500). */
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
};

export function createHotRoutes(services: RouteServices): HotRoutes {
  const credentials = credentialCache(services.db);
  return {
    serves: (method, path) => method === 'POST' && ROUTES.has(path),
    async handle(req, res, path) {
      const { scope, input, run } = ROUTES.get(path)!;
      res.setHeader('cache-control', 'no-store');
      const body = await readJsonBody(req);
      const actor = authorizeApiKey(await credentials.authenticate(req.headers), scope);
      const parsed = input.safeParse(body);
      if (!parsed.success) throw ApiError.validation(describeIssues(parsed.error.issues));
      const answer = await run(services, actor.organizationId, parsed.data);
      if (answer === undefined) {
        res.writeHead(204).end();
        return;
      }
      sendJson(res, 200, answer);
    },
  };
}
