import { ApiError } from '../shared/errors.js';
import type { UpstreamErrorKind } from './metrics.js';

/** Classifies an undici failure before response headers arrived into the agent-facing error. */
export function upstreamFailure(err: unknown): { kind: UpstreamErrorKind; error: ApiError } {
  const code = (err as { code?: string }).code ?? '';
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return { kind: 'connect_timeout', error: new ApiError('upstream_timeout', 'Connecting to the seller’s API timed out.') };
    case 'UND_ERR_HEADERS_TIMEOUT':
      return { kind: 'headers_timeout', error: new ApiError('upstream_timeout', 'The seller’s API sent no response headers in time.') };
    case 'UND_ERR_BODY_TIMEOUT':
      return { kind: 'body_timeout', error: new ApiError('upstream_timeout', 'The seller’s API stopped sending its response.') };
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return { kind: 'connect', error: new ApiError('upstream_unreachable') };
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
    case 'EPIPE':
      return { kind: 'reset', error: new ApiError('upstream_error', 'The seller’s API closed the connection.') };
    default:
      return { kind: 'other', error: new ApiError('upstream_error') };
  }
}
