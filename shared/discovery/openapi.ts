import type { DiscoveryCatalog } from '../contract.js';
import { pathParameters, QUERY_METHODS } from '../schemas/routes.js';
import { DISCOVERY_PATHS } from './paths.js';
import { paymentInfo } from './payment-info.js';
import { priceNote } from './route-prices.js';

type DiscoveredRoute = DiscoveryCatalog['routes'][number];

/**
 * The pay URL's OpenAPI 3.1 document (docs/decisions.md#D-217): one operation per declared route,
 * a priced one with `x-payment-info` and a 402 response, the service information MPP's discovery
 * draft reads (`x-service-info`, with the llms.txt link), and the seller's examples as OpenAPI
 * examples. `origin` is the pay URL as the reader reached it: every URL in it is absolute.
 */
export function openApiDocument(catalog: DiscoveryCatalog, origin: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  for (const entry of catalog.routes) {
    const { method, path } = entry.route;
    paths[path] ??= {};
    const item = paths[path];
    // Two services declaring one route: the pay URL has one such path, so the first is shown
    // (services in slug order); the listing report names the other.
    item[method.toLowerCase()] ??= operation(catalog, entry, uniqueId(operationId(method, path), operationIds));
  }
  return {
    openapi: '3.1.0',
    info: {
      title: catalog.seller.name,
      version: '1.0.0',
      description: `The priced routes of ${catalog.seller.name}, paid per call through this pay URL with x402 or MPP (HTTP 402). How to pay, buy a plan or be claimed: ${origin}${DISCOVERY_PATHS.llmsTxt}`,
    },
    servers: [{ url: origin }],
    'x-service-info': { docs: { llms: `${origin}${DISCOVERY_PATHS.llmsTxt}` } },
    paths,
  };
}

function operation(catalog: DiscoveryCatalog, entry: DiscoveredRoute, id: string) {
  const { route, price } = entry;
  const example = route.example;
  const note = priceNote(catalog, entry);
  const priced = price && catalog.payment ? paymentInfo(price, catalog.payment, note) : undefined;
  const parameters = [
    ...pathParameters(route.path).map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
      ...(example?.pathParams?.[name] !== undefined ? { example: example.pathParams[name] } : {}),
    })),
    ...Object.entries(example?.query ?? {}).map(([name, value]) => ({ name, in: 'query', schema: { type: 'string' }, example: value })),
  ];
  const takesBody = !QUERY_METHODS.includes(route.method);
  return {
    operationId: id,
    summary: route.description ?? `${route.method} ${route.path}`,
    ...(price ? { description: `${price.amountUsd} USD a call${note ? ` (${note})` : ''}.` } : {}),
    tags: [entry.serviceSlug],
    ...(parameters.length ? { parameters } : {}),
    ...(takesBody
      ? {
          requestBody: {
            content: { 'application/json': { schema: { type: 'object' }, ...(example?.body ? { example: example.body } : {}) } },
          },
        }
      : {}),
    responses: {
      '200': {
        description: 'The seller’s answer',
        ...(example?.response !== undefined ? { content: { 'application/json': { schema: {}, example: example.response } } } : {}),
      },
      ...(priced
        ? { '402': { description: 'Payment Required: the challenge, in x402’s payment-required and MPP’s www-authenticate headers' } }
        : {}),
    },
    ...(priced ? { 'x-payment-info': priced } : {}),
  };
}

/** `GET /forecast/{city}` → `get_forecast_by_city`, apart from `GET /forecast/city` → `get_forecast_city`. */
function operationId(method: string, path: string): string {
  const words = path.split('/').flatMap((part) => {
    if (!part) return [];
    const word = part.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+/g, '_');
    return part.startsWith('{') ? [`by_${word}`] : [word];
  });
  return [method.toLowerCase(), ...words].join('_');
}

/**
 * `base`, or `base_2`, `base_3`… when an earlier operation has it: OpenAPI needs operation ids
 * unique in the document, and distinct paths can still share words (`/a-b` and `/a_b`).
 */
function uniqueId(base: string, taken: Set<string>): string {
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
  taken.add(id);
  return id;
}
