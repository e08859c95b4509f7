import { createServer } from 'node:http';
import t from 'tap';
import { closeServer } from '../../runtime/http-server.js';
import {
  identityRequiredBody,
  MAX_USAGE_QUANTITY,
  parseUsageHeader,
  paymentRequiredBody,
  setUsageHeader,
  usageHeaderValue,
} from '../../sdk/index.js';
import { onLoopback, send } from '../helpers/signed-request.js';

// spec: Bodies the seller's API returns to the service (402 payment_required); Headers on proxied
// requests › hub-usage; Limits › Usage quantity.

t.test('402 payment_required body', async (t) => {
  t.same(paymentRequiredBody({ serviceSlug: 'search', usage: [{ meterSlug: 'calls', quantity: 1 }] }), {
    error: 'payment_required',
    serviceSlug: 'search',
    usage: [{ meterSlug: 'calls', quantity: 1 }],
  });
  t.same(
    paymentRequiredBody({ serviceSlug: 'search', usage: [{ meterSlug: 'tokens', quantity: 0, extra: 1 } as never], planSlug: 'pro' }),
    { error: 'payment_required', serviceSlug: 'search', usage: [{ meterSlug: 'tokens', quantity: 0 }], planSlug: 'pro' },
  );
  t.same(identityRequiredBody('search'), { error: 'payment_required', serviceSlug: 'search', usage: [] }, 'identity challenge');
  t.throws(() => paymentRequiredBody({ serviceSlug: 'search', usage: [{ meterSlug: 'calls', quantity: -1 }] }), RangeError);
  t.throws(() => paymentRequiredBody({ serviceSlug: 'search', usage: [{ meterSlug: 'calls', quantity: 2.5 }] }), RangeError);
  t.throws(() => paymentRequiredBody({ serviceSlug: '', usage: [] }), TypeError);
  t.throws(() => paymentRequiredBody({ serviceSlug: 's', usage: [], planSlug: '' }), TypeError);
  t.throws(
    () => paymentRequiredBody({ serviceSlug: 's', usage: Array.from({ length: 101 }, () => ({ meterSlug: 'calls', quantity: 1 })) }),
    /at most 100 items/,
  );
  t.throws(() => paymentRequiredBody({ serviceSlug: 's'.repeat(201), usage: [] }), /1 to 200 characters/);
});

t.test('hub-usage header: integers 0 to 2,147,483,647 only', async (t) => {
  const items = [
    { serviceSlug: 'search', meterSlug: 'calls', quantity: 0 },
    { serviceSlug: 'search', meterSlug: 'tokens', quantity: MAX_USAGE_QUANTITY },
  ];
  const value = usageHeaderValue(items);
  t.same(JSON.parse(value), items);
  t.same(parseUsageHeader(value), { ok: true, items });
  for (const quantity of [-1, 1.5, MAX_USAGE_QUANTITY + 1, Number.NaN, Infinity, '3' as never]) {
    t.throws(() => usageHeaderValue([{ serviceSlug: 's', meterSlug: 'm', quantity }]), RangeError, `refuses ${String(quantity)}`);
    t.same(parseUsageHeader(JSON.stringify([{ serviceSlug: 's', meterSlug: 'm', quantity }])), { ok: false });
  }
  t.throws(() => usageHeaderValue([{ serviceSlug: 's', meterSlug: '', quantity: 1 }]), TypeError);
  // Past the limits hub holds every usage input to, the header would be refused (invalid_usage_header).
  const item = { serviceSlug: 's', meterSlug: 'm', quantity: 1 };
  t.type(usageHeaderValue(Array.from({ length: 100 }, () => item)), 'string', '100 items');
  t.throws(() => usageHeaderValue(Array.from({ length: 101 }, () => item)), /at most 100 items/);
  t.throws(() => usageHeaderValue([{ ...item, meterSlug: 'm'.repeat(201) }]), /1 to 200 characters/);
  t.ok(parseUsageHeader(usageHeaderValue([{ ...item, meterSlug: 'm'.repeat(200) }])).ok, 'what it writes, hub reads');
  for (const bad of [undefined, '', 'nope', '{}', '[1]', '[{"serviceSlug":"s"}]', '[null]'])
    t.same(parseUsageHeader(bad), { ok: false }, `parse refuses ${bad}`);
  t.same(parseUsageHeader('[]'), { ok: true, items: [] });
});

t.test('setUsageHeader: on 2xx responses only', async (t) => {
  const server = createServer((req, res) => {
    if (req.url === '/denied') res.statusCode = 402;
    try {
      setUsageHeader(res, [{ serviceSlug: 's', meterSlug: 'calls', quantity: 2 }]);
      res.end('ok');
    } catch (err) {
      res.setHeader('x-refused', (err as Error).message);
      res.end();
    }
  });
  const port = await onLoopback(server);
  t.teardown(() => closeServer(server, 100));
  const ok = await send(port, { path: '/ok', signature: null });
  t.equal(ok.headers['hub-usage'], '[{"serviceSlug":"s","meterSlug":"calls","quantity":2}]');
  const denied = await send(port, { path: '/denied', signature: null });
  t.equal(denied.status, 402);
  t.equal(denied.headers['hub-usage'], undefined);
  t.match(denied.headers['x-refused'], /2xx responses only/);
});
