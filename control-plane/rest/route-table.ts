import type { AnyRouter } from '@trpc/server';
import { getPathRegExp, normalizePath } from 'trpc-to-openapi';
import type { HubMeta } from '../trpc/init.js';

export type RestRoute = { method: string; path: string; pattern: RegExp; procedure: string; meta: HubMeta };

/** The REST routes of a router: every procedure with `openapi` metadata, matched as trpc-to-openapi does. */
export function restRoutes(router: AnyRouter): RestRoute[] {
  const routes: RestRoute[] = [];
  for (const [procedure, definition] of Object.entries(router._def.procedures as Record<string, { _def: { meta?: HubMeta } }>)) {
    const meta = definition._def.meta;
    if (!meta?.openapi) continue;
    const path = normalizePath(meta.openapi.path);
    routes.push({ method: meta.openapi.method, path, pattern: getPathRegExp(path), procedure, meta });
  }
  return routes;
}

/** The methods a request path answers to; empty when no route has that path. */
export function methodsFor(routes: readonly RestRoute[], requestPath: string): string[] {
  const path = normalizePath(requestPath);
  return routes.filter((route) => route.pattern.test(path)).map((route) => route.method);
}
