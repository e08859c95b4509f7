import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { readJsonBody } from '../../runtime/json-body.js';
import { sendJson } from '../../runtime/respond.js';
import { ApiError } from '../../shared/errors.js';
import type { Scope } from '../../shared/scopes.js';
import { describeIssues } from '../../shared/validation-message.js';
import { authorizeApiKey } from '../auth/authorize.js';
import type { ControlPlaneServices } from '../context.js';
import type { Db } from '../db/client.js';
import { checkUsage } from './check.js';
import { credentialCache } from './credential-cache.js';
import { reportUsage } from './report.js';
import { checkUsageInput, reportUsageInput } from './wire.js';

/**
 * The two usage routes served straight from node:http, for the seller's hot path: a seller calls
 * them on every request its API serves. They answer exactly as the REST binding does (same body
 * reading, credential and scope checks, validation messages, envelope; their procedures in
 * check.ts and report.ts still describe them in the OpenAPI document) but skip the generic
 * machinery around a procedure, which costs several times the check itself, and remember API
 * keys for a few seconds (credential-cache.ts).
 *
 * Meant to sit ahead of the REST API in the control-plane's server (the usage tests and
 * `npm run bench:usage` put it there), with one line:
 *   if (usage.serves(req.method, path)) return usage.handle(req, res, path);
 */
type Route<Input extends z.ZodType> = {
  scope: Scope;
  input: Input;
  run: (db: Db, organizationId: string, input: z.output<Input>) => Promise<unknown>;
};

const route = <Input extends z.ZodType>(r: Route<Input>) => r as unknown as Route<z.ZodType>;

const ROUTES = new Map<string, Route<z.ZodType>>([
  ['/v1/usage/check', route({ scope: 'usage:read', input: checkUsageInput, run: checkUsage })],
  ['/v1/usage', route({ scope: 'usage:write', input: reportUsageInput, run: reportUsage })],
]);

export type UsageHttp = {
  /** POST to one of the usage paths; any other method there is left to the REST API (405). */
  serves(method: string | undefined, path: string): boolean;
  /** Answers the request; throws what the server turns into the envelope (and logs when a 500). */
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
};

export function createUsageHttp(services: Pick<ControlPlaneServices, 'db'>): UsageHttp {
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
      sendJson(res, 200, await run(services.db, actor.organizationId, parsed.data));
    },
  };
}
