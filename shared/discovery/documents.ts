import type { DiscoveryCatalog } from '../contract.js';
import { llmsTxt } from './llms-txt.js';
import { openApiDocument } from './openapi.js';
import { DISCOVERY_PATHS } from './paths.js';

/**
 * The pay URL's discovery documents as served, each with its path and content type: rendered by
 * the proxy for the origin a reader used, and by the management API for the seller's pay URL, from
 * the same catalog by the same code, so the seller sees what agents see.
 */
export function discoveryDocuments(catalog: DiscoveryCatalog, origin: string) {
  return {
    openapi: { path: DISCOVERY_PATHS.openapi, contentType: 'application/json', body: openApiDocument(catalog, origin) },
    llmsTxt: { path: DISCOVERY_PATHS.llmsTxt, contentType: 'text/markdown; charset=utf-8', body: llmsTxt(catalog, origin) },
  };
}
