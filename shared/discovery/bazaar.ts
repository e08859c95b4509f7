import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import type { Route } from '../schemas/routes.js';
import { QUERY_METHODS } from '../schemas/routes.js';

/**
 * x402's Bazaar discovery extension for a 402 of a declared route (docs/decisions.md#D-219), made
 * by x402's own package as its server middleware makes it: declared from the seller's example,
 * then enriched with the call's method and, for a templated path, the route template and the
 * call's path parameters. An x402 client echoes `extensions` into its payment, which is where a
 * facilitator that indexes Bazaar reads it. `{ bazaar: … }`, to merge into `extensions`.
 * `examples: false` leaves the example out: the route, method and path parameters only.
 */
export function bazaarExtensions(route: Route, path: string, examples = true): Record<string, unknown> {
  const example = examples ? route.example : undefined;
  // Bazaar's schema takes an object as the output example; another JSON value is left out.
  const response = example?.response;
  const output = isPlainObject(response) ? { output: { example: response } } : {};
  const declared = QUERY_METHODS.includes(route.method)
    ? declareDiscoveryExtension({ input: example?.query ?? {}, ...output })
    : declareDiscoveryExtension({ input: example?.body ?? {}, bodyType: 'json', ...output });
  const context = {
    method: route.method,
    adapter: { getPath: () => path },
    // Bazaar writes templates with `:name`; the seller's are OpenAPI's `{name}`.
    routePattern: route.path.replace(/\{([^}]+)\}/g, ':$1'),
  };
  return { bazaar: bazaarResourceServerExtension.enrichDeclaration!(declared.bazaar, context) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
