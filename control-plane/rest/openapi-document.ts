import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { type ErrorCode, errorCodes } from '../../shared/errors.js';
import { type RestRoute, restRoutes } from './route-table.js';

export const OPENAPI_PATH = '/v1/openapi.json';
export const API_VERSION = '1.0.0';

const AUTH_ERRORS: Record<number, ErrorCode[]> = {
  401: ['missing_bearer_token', 'invalid_token'],
  403: ['auth_type_not_allowed', 'insufficient_scope', 'organization_required', 'organization_permission_required'],
};

const DESCRIPTION = [
  "hub's management API. Send `Authorization: Bearer <token>` with an API key (`hub_…`) or a dashboard session token (`hubses_…`); each operation says which it accepts.",
  'Money is a decimal string of USD with six decimals; timestamps are ISO 8601 in UTC. Lists are parent-scoped and unpaginated.',
  'Every error is `{ error, reason? }`: `error` is a machine code, except on 400 validation failures of a field, where it is a human-readable message. A body that is not a JSON object is `invalid_request`, the message in `reason`.',
].join('\n\n');

type Operation = { description?: string; responses?: Record<string, unknown> };

/**
 * The OpenAPI 3 document of the REST routes. trpc-to-openapi derives paths, parameters and
 * bodies from the procedures' zod schemas; its error responses describe tRPC's body, so they are
 * replaced by the spec's envelope, and success statuses other than 200 are filled in.
 */
export function buildOpenApiDocument(router: AnyRouter, baseUrl: string): OpenAPIObject {
  const document = generateOpenApiDocument(router, {
    title: 'hub management API',
    version: API_VERSION,
    description: DESCRIPTION,
    baseUrl,
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key (hub_…) or dashboard session token (hubses_…)' } },
  });
  document.components = {
    ...document.components,
    schemas: {
      ...document.components?.schemas,
      Error: {
        type: 'object',
        required: ['error'],
        properties: {
          error: { type: 'string', description: 'Machine code; on 400 validation failures of a field a human-readable message' },
          reason: { type: 'string', description: 'Human-readable detail' },
        },
      },
    },
  };
  for (const route of restRoutes(router)) {
    const operation = (document.paths?.[route.path] as Record<string, Operation> | undefined)?.[route.method.toLowerCase()];
    if (operation) describeOperation(operation, route);
  }
  return document;
}

function describeOperation(operation: Operation, route: RestRoute): void {
  const { meta } = route;
  if (meta.access) operation.description = [operation.description, `Accepts: ${meta.access}`].filter(Boolean).join('\n\n');

  const responses: Record<string, unknown> = {};
  const success = operation.responses?.['200'];
  if (meta.successStatus === 204) responses['204'] = { description: 'Done; no body' };
  else responses[String(meta.successStatus ?? 200)] = success;

  const codesByStatus = new Map<number, ErrorCode[]>();
  const add = (status: number, codes: ErrorCode[]) => codesByStatus.set(status, [...(codesByStatus.get(status) ?? []), ...codes]);
  if (meta.openapi?.protect !== false) for (const [status, codes] of Object.entries(AUTH_ERRORS)) add(Number(status), codes);
  for (const code of meta.errors ?? []) add(errorCodes[code].status, [code]);

  responses['400'] = errorResponse(
    'A field failed validation (`error` holds a human-readable message), or the body is not a JSON object (`invalid_request`)',
  );
  for (const [status, codes] of [...codesByStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = errorResponse(`One of: ${codes.map((code) => `\`${code}\``).join(', ')}`);
  }
  responses['500'] = errorResponse('`Internal server error`; nothing internal is shown');
  operation.responses = responses;
}

function errorResponse(description: string) {
  return { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
}
