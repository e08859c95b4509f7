import { Validator } from '@seriousme/openapi-schema-validator';
import t from 'tap';
import { openApiDocument } from '../../../shared/discovery/openapi.js';
import { forecastCatalog } from '../../helpers/discovery-catalog.js';

// Operation ids are unique in a document, as OpenAPI requires, whatever paths the seller declares.

t.test('routes whose paths share words get distinct operation ids, and the document is valid OpenAPI 3.1', async (t) => {
  const paths = ['/forecast/{city}', '/forecast/city', '/forecast/by_city', '/a-b', '/a_b'];
  const document = openApiDocument(forecastCatalog(paths.map((path) => ({ path }))), 'https://acme.pay.example');
  const ids = paths.map((path) => (document.paths[path]!.get as { operationId: string }).operationId);
  t.same(ids, ['get_forecast_by_city', 'get_forecast_city', 'get_forecast_by_city_2', 'get_a_b', 'get_a_b_2']);
  const result = await new Validator().validate(document);
  t.ok(result.valid, JSON.stringify(result.errors));
});
