import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../../runtime/respond.js';
import type { PaySeller } from '../../shared/contract.js';
import { discoveryDocuments } from '../../shared/discovery/documents.js';
import { DISCOVERY_PATHS } from '../../shared/discovery/paths.js';
import { ApiError } from '../../shared/errors.js';
import { originUrl, publicOrigin } from '../arrival/public-origin.js';
import type { ProxyServices } from '../context.js';

/**
 * `GET /openapi.json` and `GET /llms.txt` on a pay URL (docs/decisions.md#D-216): public, for any
 * agent or crawler, rendered from the seller's catalog as the proxy holds it (dropped as soon as
 * the catalog changes) for the origin the reader used. Short-lived in caches for the same reason.
 */
const CACHE_CONTROL = 'public, max-age=60';

export async function serveDiscoveryDocument(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  seller: PaySeller,
  services: ProxyServices,
) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    throw new ApiError('method_not_allowed');
  }
  const catalog = await services.catalog.discovery(seller.id);
  if (!catalog) throw new ApiError('seller_not_found');
  const documents = discoveryDocuments(catalog, originUrl(publicOrigin(req, services.config.proxy.trustProxy)));
  if (path === DISCOVERY_PATHS.openapi) {
    return sendJson(res, 200, documents.openapi.body, { 'cache-control': CACHE_CONTROL, 'access-control-allow-origin': '*' });
  }
  const text = documents.llmsTxt.body;
  res.writeHead(200, {
    'content-type': documents.llmsTxt.contentType,
    'content-length': Buffer.byteLength(text).toString(),
    'cache-control': CACHE_CONTROL,
    'access-control-allow-origin': '*',
  });
  res.end(text);
}
