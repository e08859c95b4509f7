import type { DiscoveryCatalog } from '../contract.js';
import { llmsTxt } from './llms-txt.js';
import { openApiDocument } from './openapi.js';
import { DISCOVERY_PATHS, type DiscoveryPath } from './paths.js';

/** The content type each document is served with. */
export const DOCUMENT_CONTENT_TYPES: Record<DiscoveryPath, string> = {
  [DISCOVERY_PATHS.openapi]: 'application/json',
  [DISCOVERY_PATHS.llmsTxt]: 'text/markdown; charset=utf-8',
};

/**
 * The pay URL's discovery documents as served, each with its path and content type: rendered by
 * the proxy for the origin a reader used, and by the management API for the seller's pay URL, from
 * the same catalog by the same code, so the seller sees what agents see.
 */
export function discoveryDocuments(catalog: DiscoveryCatalog, origin: string) {
  return {
    openapi: {
      path: DISCOVERY_PATHS.openapi,
      contentType: DOCUMENT_CONTENT_TYPES[DISCOVERY_PATHS.openapi],
      body: openApiDocument(catalog, origin),
    },
    llmsTxt: {
      path: DISCOVERY_PATHS.llmsTxt,
      contentType: DOCUMENT_CONTENT_TYPES[DISCOVERY_PATHS.llmsTxt],
      body: llmsTxt(catalog, origin),
    },
  };
}

/** The one document at `path`, as the text served there (the other is not rendered). */
export function discoveryDocumentText(catalog: DiscoveryCatalog, origin: string, path: DiscoveryPath): string {
  return path === DISCOVERY_PATHS.openapi ? JSON.stringify(openApiDocument(catalog, origin)) : llmsTxt(catalog, origin);
}
