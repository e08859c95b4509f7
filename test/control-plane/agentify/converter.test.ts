import t from 'tap';
import { PageConverter } from '../../../control-plane/agentify/converter.js';
import { ApiError } from '../../../shared/errors.js';

// Conversion runs on a worker thread and is cut off past its time, whatever the page does.

t.test('a page converts on the worker', async (t) => {
  const converter = new PageConverter(30_000);
  t.teardown(() => converter.close());
  const page = await converter.convert(
    '<html><head><title>T</title></head><body><p>Hello <b>there</b></p></body></html>',
    'https://a.example/',
  );
  t.equal(page.title, 'T');
  t.match(page.markdown, /Hello \*\*there\*\*/);
});

t.test('a conversion past its time is page_too_large; a fragment converts too', async (t) => {
  const converter = new PageConverter(200);
  t.teardown(() => converter.close());
  const huge = `<html><body>${'<div><p>words words words <a href="/x">link</a></p>'.repeat(40_000)}</body></html>`;
  const err = await converter.convert(huge, 'https://a.example/').catch((e: unknown) => e);
  t.ok(err instanceof ApiError);
  t.match(err, { code: 'page_too_large', reason: /longer than 0\.2 s/ });
  const relaxed = new PageConverter(30_000);
  t.teardown(() => relaxed.close());
  t.match((await relaxed.convert('<p>after</p>', 'https://a.example/')).markdown, /after/);
});
