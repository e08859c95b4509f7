import t from 'tap';
import { RenderedDocuments } from '../../../proxy/discovery/rendered-documents.js';
import { discoveryDocumentText } from '../../../shared/discovery/documents.js';
import { DISCOVERY_PATHS, type DiscoveryPath } from '../../../shared/discovery/paths.js';
import { forecastCatalog } from '../../helpers/discovery-catalog.js';

// The proxy renders a discovery document once per catalog and origin, and only the one asked for.

t.test('a document is rendered once per catalog and origin, and only the one asked for', async (t) => {
  const renders: string[] = [];
  const documents = new RenderedDocuments((catalog, origin, path) => {
    renders.push(`${path} ${origin}`);
    return discoveryDocumentText(catalog, origin, path);
  });
  const catalog = forecastCatalog([{ path: '/forecast/{city}' }]);
  const origin = 'https://acme.pay.example';
  const first = documents.text(catalog, origin, DISCOVERY_PATHS.llmsTxt);
  t.equal(documents.text(catalog, origin, DISCOVERY_PATHS.llmsTxt), first);
  t.same(renders, [`/llms.txt ${origin}`], 'read twice, rendered once; the OpenAPI document not at all');

  t.ok(JSON.parse(documents.text(catalog, origin, DISCOVERY_PATHS.openapi)).paths['/forecast/{city}']);
  documents.text(catalog, 'http://other.example', DISCOVERY_PATHS.llmsTxt);
  t.equal(renders.length, 3, 'another document or origin is rendered on its own');

  const changed = forecastCatalog([{ path: '/forecast/{city}', description: 'Changed' }]);
  t.match(documents.text(changed, origin, DISCOVERY_PATHS.llmsTxt), /Changed/, 'a changed catalog is rendered anew');
  t.equal(renders.length, 4);
});

t.test('the documents kept for one catalog are bounded', async (t) => {
  let renders = 0;
  const documents = new RenderedDocuments(() => String(++renders));
  const catalog = forecastCatalog([]);
  const path: DiscoveryPath = DISCOVERY_PATHS.llmsTxt;
  for (let i = 0; i < 40; i++) documents.text(catalog, `https://o${i}.example`, path);
  t.equal(documents.text(catalog, 'https://o39.example', path), '40', 'the newest is kept');
  t.equal(renders, 40);
});
