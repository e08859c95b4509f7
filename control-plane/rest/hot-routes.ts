import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { readJsonBody } from '../../runtime/json-body.js';
import { sendJson } from '../../runtime/respond.js';
import { ApiError } from '../../shared/errors.js';
import { pageViewInput } from '../../shared/schemas/page-views.js';
import type { Scope } from '../../shared/scopes.js';
import { describeIssues } from '../../shared/validation-message.js';
import { authorizeApiKey } from '../auth/authorize.js';
import type { ControlPlaneServices } from '../context.js';
import { acceptPageView } from '../page-views/page-views.js';
import { checkUsage } from '../usage/check.js';
import { credentialCache } from '../usage/credential-cache.js';
import { reportUsage } from '../usage/report.js';
import { checkUsageInput, reportUsageInput } from '../usage/wire.js';

/**
 * The routes a seller calls on every request its API serves or every page its site shows (the
 * usage check and report, page views), served straight from node:http. They answer exactly as
 * the REST binding does (same body reading, credential and scope checks, validation messages,
 * envelope; their procedures still describe them in the OpenAPI document) but skip the generic
 * machinery around a procedure, which costs several times the work itself, and remember API keys
 * for a few seconds (usage/credential-cache.ts).
 *
 * The control-plane's server puts them ahead of the REST API with one line:
 *   if (hot.serves(req.method, path)) return hot.handle(req, res, path);
 */
type Services = Pick<ControlPlaneServices, 'db' | 'pageViews' | 'masterKey'>;

type Route<Input extends z.ZodType> = {
  scope: Scope;
  input: Input;
  /** The answer's body, sent with 200; undefined is an empty 204. */
  run: (services: Services, organizationId: string, input: z.output<Input>) => Promise<unknown>;
};

const route = <Input extends z.ZodType>(r: Route<Input>) => r as unknown as Route<z.ZodType>;

const ROUTES = new Map<string, Route<z.ZodType>>([
  ['/v1/usage/check', route({ scope: 'usage:read', input: checkUsageInput, run: (s, org, input) => checkUsage(s.db, org, input) })],
  ['/v1/usage', route({ scope: 'usage:write', input: reportUsageInput, run: (s, org, input) => reportUsage(s.db, org, input) })],
  ['/v1/page-views', route({ scope: 'page-views:write', input: pageViewInput, run: acceptPageView })],
]);

export type HotRoutes = {
  /** POST to one of their paths; any other method there is left to the REST API (405). */
  serves(method: string | undefined, path: string): boolean;
  /** Answers the request; throws what the server turns into the envelope (and logs when a 500). */
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
};

export function createHotRoutes(services: Services): HotRoutes {
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
