import type { DiscoveryCatalog } from '../../shared/contract.js';
import { discoveryDocumentText } from '../../shared/discovery/documents.js';
import type { DiscoveryPath } from '../../shared/discovery/paths.js';

export type RenderDocument = (catalog: DiscoveryCatalog, origin: string, path: DiscoveryPath) => string;

/** Origins kept per catalog: a pay URL is read under one or two; more are let go rather than kept. */
const MAX_PER_CATALOG = 16;

/**
 * Discovery documents rendered once per catalog and origin, then served as text. A changed catalog
 * is a new object (the proxy drops the old one), so the old one's documents go with it.
 */
export class RenderedDocuments {
  private readonly byCatalog = new WeakMap<DiscoveryCatalog, Map<string, string>>();

  constructor(private readonly render: RenderDocument = discoveryDocumentText) {}

  text(catalog: DiscoveryCatalog, origin: string, path: DiscoveryPath): string {
    let rendered = this.byCatalog.get(catalog);
    if (!rendered) {
      rendered = new Map();
      this.byCatalog.set(catalog, rendered);
    }
    const key = `${path} ${origin}`;
    let text = rendered.get(key);
    if (text === undefined) {
      if (rendered.size >= MAX_PER_CATALOG) rendered.clear();
      text = this.render(catalog, origin, path);
      rendered.set(key, text);
    }
    return text;
  }
}
