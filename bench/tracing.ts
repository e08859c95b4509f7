import { createServer } from 'node:http';
import { startTracing } from '../runtime/trace-export.js';
import { inServerSpan, inSpan, type Tracing, withTraceContext } from '../runtime/tracing.js';
import { traceAttributes } from '../shared/trace-attributes.js';

/**
 * What tracing costs one paid call's instrumentation, on and off (docs/decisions.md#D-252): the
 * spans a paid retry makes in both processes (the call, claim, upstream, settle in the proxy; a
 * claim and a settle in the control-plane, each joined by `traceparent`), with their attributes,
 * run back to back without the I/O around them. On, spans go to a local collector that answers
 * 200, in batches, as they would in production.
 */
const ROUNDS = 5;
const CALLS = 20_000;

async function paidCall(tracing: Tracing | undefined): Promise<void> {
  const headers = { 'hub-seller-id': 'seller_1' };
  await inSpan(
    tracing,
    'paid call',
    async () => {
      for (const name of ['payment.claim', 'upstream', 'payment.settle']) {
        await inSpan(tracing, name, async (span) => {
          const sent = withTraceContext(tracing, { authorization: 'Bearer x' });
          await inServerSpan(tracing, `internal.${name}`, sent, async (server) => {
            server?.setAttributes(traceAttributes({ paymentId: 'apay_1', amountUsd: '0.010000', network: 'eip155:1', scheme: 'exact' }));
          });
          span?.setAttributes(traceAttributes({ paymentId: 'apay_1', status: 'claimed' }));
        });
      }
    },
    { attributes: traceAttributes({ sellerId: headers['hub-seller-id'], method: 'GET' }) },
  );
}

async function microsPerCall(tracing: Tracing | undefined): Promise<number> {
  const started = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await paidCall(tracing);
  const { user, system } = process.cpuUsage(started);
  return (user + system) / CALLS;
}

async function main(): Promise<void> {
  const collector = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end('{}')));
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const { port } = collector.address() as { port: number };
  const tracing = startTracing('bench', `http://127.0.0.1:${port}`)!;
  const off: number[] = [];
  const on: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    off.push(await microsPerCall(undefined));
    on.push(await microsPerCall(tracing));
  }
  await tracing.stop();
  collector.close();
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(2);
  console.log(`CPU per paid call's instrumentation (median of ${ROUNDS} × ${CALLS}): off ${median(off)} µs, on ${median(on)} µs`);
}

await main();
