import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PaySeller } from '../../shared/contract.js';
import { DOCUMENT_CONTENT_TYPES } from '../../shared/discovery/documents.js';
import type { DiscoveryPath } from '../../shared/discovery/paths.js';
import { ApiError } from '../../shared/errors.js';
import { originUrl, publicOrigin } from '../arrival/public-origin.js';
import type { ProxyServices } from '../context.js';
import { RenderedDocuments } from './rendered-documents.js';

/**
 * `GET /openapi.json` and `GET /llms.txt` on a pay URL (docs/decisions.md#D-216): public, for any
 * agent or crawler, rendered from the seller's catalog as the proxy holds it (dropped as soon as
 * the catalog changes) for the origin the reader used. Short-lived in caches for the same reason.
 */
const CACHE_CONTROL = 'public, max-age=60';

const rendered = new RenderedDocuments();

export async function serveDiscoveryDocument(
  path: DiscoveryPath,
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
  const text = rendered.text(catalog, originUrl(publicOrigin(req, services.config.proxy.trustProxy)), path);
  res.writeHead(200, {
    'content-type': DOCUMENT_CONTENT_TYPES[path],
    'content-length': Buffer.byteLength(text).toString(),
    'cache-control': CACHE_CONTROL,
    'access-control-allow-origin': '*',
  });
  res.end(text);
}
