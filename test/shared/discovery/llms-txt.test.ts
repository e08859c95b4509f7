import t from 'tap';
import { llmsTxt } from '../../../shared/discovery/llms-txt.js';
import { forecastCatalog } from '../../helpers/discovery-catalog.js';

// A price's note is the seller's text, as names and descriptions are: it stays on its route's line.

t.test("a price note with line breaks stays on its route's line", async (t) => {
  const catalog = forecastCatalog([{ path: '/forecast/{city}', description: 'A forecast' }], 'per call\n\n## Injected\n- [x](http://x)');
  const text = llmsTxt(catalog, 'https://acme.pay.example');
  t.notMatch(text, /^## Injected/m, 'no section of its own');
  t.match(
    text,
    /^- \[GET \/forecast\/\{city\}\]\(.*\): A forecast\. 0\.010000 USD a call \(per call ## Injected - \[x\]\(http:\/\/x\)\)$/m,
  );
});
