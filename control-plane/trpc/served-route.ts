import type { z } from 'zod';
import type { Scope } from '../../shared/scopes.js';
import type { ControlPlaneServices } from '../context.js';
import { apiKeyProcedure } from './procedures.js';

/**
 * A route a seller calls on every request its API serves or every page its site shows (the usage
 * check and report, page views), defined once: its path, scope, input and work. It is served two
 * ways from that one definition: as a procedure of the REST API (`routeProcedure`, described in
 * the OpenAPI document like any other) and by the direct binding ahead of it (rest/hot-routes.ts),
 * which skips the procedure machinery.
 */
export type ServedRoute<Input extends z.ZodType = z.ZodType> = {
  /** Always POST. */
  path: string;
  scope: Scope;
  input: Input;
  /** The answer's body, sent with 200; undefined is an empty 204. */
  run: (services: RouteServices, organizationId: string, input: z.output<Input>) => Promise<unknown>;
};

export type RouteServices = Pick<ControlPlaneServices, 'db' | 'pageViews' | 'masterKey'>;

export function servedRoute<Input extends z.ZodType>(route: ServedRoute<Input>): ServedRoute<Input> {
  return route;
}

type Meta = Parameters<ReturnType<typeof apiKeyProcedure>['meta']>[0];
type RouteMeta = Omit<Meta, 'openapi'> & { openapi: Omit<NonNullable<Meta['openapi']>, 'method' | 'path'> };

/** The route as a procedure of the REST API: its scope, path, input and work are the route's. */
export function routeProcedure<Input extends z.ZodType, Output extends z.ZodType>(
  route: ServedRoute<Input>,
  meta: RouteMeta,
  output: Output,
) {
  return apiKeyProcedure(route.scope)
    .meta({ ...meta, openapi: { ...meta.openapi, method: 'POST', path: route.path } } as Meta)
    .input(route.input)
    .output(output)
    .mutation(({ ctx, input }) => route.run(ctx, ctx.actor.organizationId, input as z.output<Input>) as Promise<never>);
}
