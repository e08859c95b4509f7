import t from 'tap';
import { PageConverter } from '../../../control-plane/agentify/converter.js';
import { ApiError } from '../../../shared/errors.js';

// Conversion runs on a worker thread and is cut off past its time, whatever the page does; the
// time counts from when a thread takes the page up, not from when it was handed in.

/** A page linkedom and Readability take minutes over (their work grows faster than its size). */
const HEAVY = `<html><body>${'<div><p>words words words <a href="/x">link</a></p>'.repeat(3_000)}</body></html>`;

t.test('a page converts on the worker', async (t) => {
  const converter = new PageConverter({ timeoutMs: 30_000 });
  t.teardown(() => converter.close());
  const page = await converter.convert(
    'org_a',
    '<html><head><title>T</title></head><body><p>Hello <b>there</b></p></body></html>',
    'https://a.example/',
  );
  t.equal(page.title, 'T');
  t.match(page.markdown, /Hello \*\*there\*\*/);
});

t.test('a conversion past its time is page_too_large; a page that waited its turn meanwhile still converts', async (t) => {
  const converter = new PageConverter({ timeoutMs: 1_000, slots: 1 });
  t.teardown(() => converter.close());
  const heavy = converter.convert('org_a', HEAVY, 'https://a.example/').catch((e: unknown) => e);
  // Waits behind the heavy page for longer than the limit, then converts well within it.
  const waiting = converter.convert('org_b', '<p>after</p>', 'https://a.example/');
  const err = await heavy;
  t.ok(err instanceof ApiError);
  t.match(err, { code: 'page_too_large', reason: /longer than 1 s/ });
  t.match((await waiting).markdown, /after/);
});

t.test('an organization’s waiting line is bounded, and so are all lines together', async (t) => {
  const converter = new PageConverter({ timeoutMs: 1_000, slots: 1, waitingPerKey: 1, waitingInAll: 2 });
  t.teardown(() => converter.close());
  const pages = [
    converter.convert('org_a', HEAVY, 'https://a.example/'),
    converter.convert('org_a', '<p>a2</p>', 'https://a.example/'),
    converter.convert('org_b', '<p>b1</p>', 'https://a.example/'),
  ].map((p) => p.catch((e: unknown) => e));
  await t.rejects(converter.convert('org_a', '<p>a3</p>', 'https://a.example/'), {
    code: 'service_unavailable',
    reason: /This organization has 1 pages waiting/,
  });
  await t.rejects(converter.convert('org_c', '<p>c1</p>', 'https://a.example/'), {
    code: 'service_unavailable',
    reason: /Too many pages/,
  });
  const [heavy, a2, b1] = await Promise.all(pages);
  t.match(heavy, { code: 'page_too_large' });
  t.match(a2, { markdown: /a2/ });
  t.match(b1, { markdown: /b1/ });
});
