import { z } from 'zod';
import { MAX_USAGE_QUANTITY } from '../usage.js';
import { description, idSchema, meterKey, wholeNumber } from './fields.js';

/**
 * The routes of a seller's API that a service prices, as the seller declares them for agents to
 * discover: what a call looks like (method, path template, an example) and the usage one call
 * takes, which hub prices as it prices the seller's 402. hub forwards every path whether declared
 * or not; a declaration only describes.
 */

export const ROUTE_METHODS = ['GET', 'HEAD', 'DELETE', 'POST', 'PUT', 'PATCH'] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

/** Methods whose input is a query string; the others take a JSON body (as x402's Bazaar splits them). */
export const QUERY_METHODS: readonly RouteMethod[] = ['GET', 'HEAD', 'DELETE'];

/** At most this many routes per service: every one is in each document an agent reads. */
export const MAX_ROUTES = 100;
/** Each example, as JSON: enough to show a call, small enough for every 402 that carries one. */
export const MAX_EXAMPLE_BYTES = 8_192;

/**
 * A path template as OpenAPI writes one: `/forecast/{city}`. Segments hold the characters a URL
 * path may hold unencoded; a parameter is a whole segment. `..` and `//` are refused: a template
 * names one path of the seller's API, never a way around it.
 */
const PATH_TEMPLATE = /^(?:\/(?:[A-Za-z0-9._~!$&'()*+,;=:@%-]+|\{[A-Za-z_][A-Za-z0-9_]{0,63}\}))+$|^\/$/;

export const routePath = z
  .string()
  .max(512, 'must be at most 512 characters')
  .regex(PATH_TEMPLATE, 'must be a path starting with "/", parameters as whole {segments}, such as /forecast/{city}')
  .refine((path) => !path.split('/').includes('..'), 'must not hold ".." segments')
  .refine((path) => {
    const names = pathParameters(path);
    return new Set(names).size === names.length;
  }, 'must not repeat a parameter')
  .meta({ example: '/forecast/{city}' });

/** The parameter names of a path template, in order. */
export function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
}

/** A JSON value of bounded size; depth is bounded before any body is parsed (runtime/read-body.ts). */
function boundedJson<T extends z.ZodType>(schema: T) {
  return schema.refine((value) => JSON.stringify(value).length <= MAX_EXAMPLE_BYTES, `must be at most ${MAX_EXAMPLE_BYTES} bytes as JSON`);
}

const stringMap = z.record(z.string().min(1).max(64), z.string().max(512));

export const routeExample = z
  .strictObject({
    pathParams: stringMap.optional().meta({ description: 'A value for each {parameter} of the path' }),
    query: boundedJson(stringMap).optional().meta({ description: 'Query parameters of an example call' }),
    body: boundedJson(z.record(z.string(), z.unknown()))
      .optional()
      .meta({ description: 'JSON body of an example call (POST, PUT, PATCH)' }),
    response: boundedJson(z.unknown()).optional().meta({ description: "The seller's answer to that call" }),
  })
  .meta({ id: 'RouteExample' });

const usageItem = z.strictObject({
  meterSlug: meterKey,
  quantity: wholeNumber(1, MAX_USAGE_QUANTITY).meta({ description: 'Units of the meter one call takes' }),
});

export const route = z
  .strictObject({
    method: z.enum(ROUTE_METHODS),
    path: routePath,
    description: description.min(1).optional().meta({ description: 'What a call does, for an agent choosing one' }),
    usage: z
      .array(usageItem)
      .min(1, 'must name the usage one call takes')
      .max(10, 'must hold at most 10 items')
      .refine((items) => new Set(items.map((i) => i.meterSlug)).size === items.length, 'must not name a meter twice'),
    example: routeExample.optional(),
  })
  .meta({ id: 'Route' });
export type Route = z.infer<typeof route>;

export const routes = z
  .array(route)
  .max(MAX_ROUTES, `must hold at most ${MAX_ROUTES} routes`)
  .refine((list) => new Set(list.map((r) => `${r.method} ${r.path}`)).size === list.length, 'must not declare a method and path twice');

export const putRoutesInput = z.strictObject({ serviceId: idSchema('service'), routes });
