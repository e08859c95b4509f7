// npm run bench:jwe — an end-to-end encrypted request through hub's proxy against the same request
// in the clear, with the JWE work in each HUB_JWE_MODE: inline, spare, pool.
//
// Every target POSTs the same 1 KB JSON body to the same 1 KB JSON upstream; the encrypted rows
// send it as a Compact JWE (ECDH-ES + A256GCM on P-256) with a reply key, so the proxy decrypts
// the request, forwards the plaintext signed, and encrypts the seller's answer. wrk drives each
// target in turn (one thread, BENCH_CONNECTIONS connections), in interleaved rounds; each row
// reports its median round and the proxy's CPU per request, then one call at a time (what a call
// costs end to end), against this upstream and against one that works 1 ms before it answers, as
// an API does. The agent's own share (encrypting
// with `jose`, decrypting the reply) is measured apart, as it runs on the agent's machine.
// Options: BENCH_SECONDS per measurement (default 5), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 50);
// BENCH_PROFILE=<dir> writes a CPU profile of each proxy there when it stops.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { createReplyKey, decryptReply, encryptRequest, type Jwks } from '../sdk/encryption.js';
import { cpuMs } from './lib/cpu.js';
import { freePort, Processes, waitUntilUp } from './lib/processes.js';
import { seedSeller } from './lib/seed.js';
import { type LoadResult, requireWrk, wrk } from './lib/wrk.js';

const here = dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const log = (line: string) => console.log(line);
const HOST = 'bench.pay.localhost';

type Target = { name: string; port: number; pid: number; script: string };
/**
 * A round at load, and one call at a time (its p50 is what one call costs end to end), to the
 * upstream that answers at once and to the one that works 1 ms first.
 */
type Measured = LoadResult & { cpuPerRequestMs: number; single: LoadResult; slow: LoadResult };

async function main() {
  await requireWrk(log);
  const processes = new Processes();
  const work = mkdtempSync(join(tmpdir(), 'hub-bench-'));
  try {
    const upstreamPort = await freePort();
    processes.start(process.execPath, ['--import', 'tsx', join(here, 'servers', 'upstream.ts'), String(upstreamPort)]);
    await waitUntilUp(`http://127.0.0.1:${upstreamPort}/`);

    const masterKey = randomBytes(32).toString('hex');
    const cpPort = await freePort();
    const hubEnv = {
      DATABASE_URL: `file:${join(work, 'hub.db')}`,
      HUB_DATA_DIR: work,
      HUB_MASTER_KEY: masterKey,
      HUB_CONTROL_PLANE_PORT: String(cpPort),
      HUB_LOG_LEVEL: 'warn',
    };
    const { apiKey, sellerId } = await seedSeller(hubEnv.DATABASE_URL, masterKey, 'bench', `http://127.0.0.1:${upstreamPort}`);
    const hubBin = join(here, '..', 'bin', 'hub.js');
    processes.start(process.execPath, [hubBin, 'start', 'control-plane'], hubEnv);
    await waitUntilUp(`http://127.0.0.1:${cpPort}/healthz`);
    // The seller's key, made as a seller makes it: through the management API.
    const made = await fetch(`http://127.0.0.1:${cpPort}/v1/sellers/${sellerId}/encryption-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    if (made.status !== 201) throw new Error(`creating the encryption key failed: ${made.status}`);

    // Three proxies on the same control-plane, one per HUB_JWE_MODE, with one worker thread (two cores here).
    const startProxy = async (mode: string) => {
      const port = await freePort();
      const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
      const child = processes.start(process.execPath, [...profile, hubBin, 'start', 'proxy'], {
        ...hubEnv,
        HUB_PROXY_PORT: String(port),
        HUB_JWE_MODE: mode,
        HUB_JWE_THREADS: '1',
      });
      await waitUntilUp(`http://127.0.0.1:${port}/readyz`);
      return { port, pid: child.pid! };
    };
    const inline = await startProxy('inline');
    const spare = await startProxy('spare');
    const pool = await startProxy('pool');

    // fetch() cannot set Host; undici's request can.
    const jwks = (await (
      await request(`http://127.0.0.1:${inline.port}/.well-known/jwks.json`, { headers: { host: HOST } })
    ).body.json()) as Jwks;
    if (!jwks.keys?.length) throw new Error('the pay URL publishes no key');
    const plaintext = JSON.stringify({ query: 'x'.repeat(1000) }).slice(0, 1024);
    const replyKey = await createReplyKey();
    const sealed = await encryptRequest(jwks, plaintext, { replyKey, contentType: 'application/json' });
    for (const proxy of [inline, spare, pool]) await checkRoundTrip(proxy.port, sealed, replyKey);

    const script = (name: string, contentType: string, body: string) => {
      const path = join(work, `${name}.lua`);
      writeFileSync(
        path,
        [
          'wrk.method = "POST"',
          `wrk.headers["Host"] = "${HOST}"`,
          `wrk.headers["content-type"] = "${contentType}"`,
          `wrk.body = ${JSON.stringify(body)}`,
          '',
        ].join('\n'),
      );
      return path;
    };
    const clear = script('clear', 'application/json', plaintext);
    const encrypted = script('encrypted', 'application/jose', sealed);
    const targets: Target[] = [
      { name: 'clear POST', ...inline, script: clear },
      { name: 'encrypted POST, inline', ...inline, script: encrypted },
      { name: 'encrypted POST, spare(1)', ...spare, script: encrypted },
      { name: 'encrypted POST, pool(1)', ...pool, script: encrypted },
    ];

    const measure = async (target: Target, secondsFor: number): Promise<Measured> => {
      const before = cpuMs([target.pid]);
      const url = `http://127.0.0.1:${target.port}/items`;
      const result = await wrk(url, { connections, seconds: secondsFor, script: target.script });
      const cpuPerRequestMs = (cpuMs([target.pid]) - before) / result.requests;
      const oneAtATime = (path: string) =>
        wrk(`http://127.0.0.1:${target.port}${path}`, { connections: 1, seconds: secondsFor, script: target.script });
      return { ...result, cpuPerRequestMs, single: await oneAtATime('/items'), slow: await oneAtATime('/slow/items') };
    };
    for (const target of targets) await measure(target, 2); // warm JIT, pools, caches

    const runs = new Map<string, Measured[]>(targets.map((target) => [target.name, []]));
    for (let round = 1; round <= rounds; round++) {
      for (const target of targets) {
        const result = await measure(target, seconds);
        runs.get(target.name)!.push(result);
        log(`round ${round}, ${target.name}: ${result.rps.toFixed(0)} req/s, ${result.errors} errors`);
      }
    }
    const results = new Map([...runs].map(([name, list]) => [name, [...list].sort((a, b) => a.rps - b.rps)[Math.floor(list.length / 2)]!]));
    const agent = await agentShare(jwks, plaintext);

    console.log(
      `\nPOST, 1 KB JSON body and 1 KB JSON answer, wrk -t1 -c${connections} -d${seconds}s, median of ${rounds} interleaved rounds, loopback, ${new Date().toISOString().slice(0, 10)}\n`,
    );
    console.log(
      `| target | req/s at ${connections} | p50 ms | p99 ms | errors | proxy CPU ms/request | cost vs clear (throughput) | p50 ms, one call at a time | cost vs clear (latency) | p50 ms, seller works 1 ms | cost vs clear |`,
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    const base = results.get('clear POST')!;
    for (const [name, r] of results) {
      console.log(
        `| ${name} | ${r.rps.toFixed(0)} | ${r.p50ms.toFixed(2)} | ${r.p99ms.toFixed(2)} | ${r.errors + r.single.errors + r.slow.errors} | ${r.cpuPerRequestMs.toFixed(3)} | ` +
          `${(base.rps / r.rps).toFixed(2)}× | ${r.single.p50ms.toFixed(3)} | ${(r.single.p50ms / base.single.p50ms).toFixed(2)}× | ` +
          `${r.slow.p50ms.toFixed(3)} | ${(r.slow.p50ms / base.slow.p50ms).toFixed(2)}× |`,
      );
    }
    const inlined = results.get('encrypted POST, inline')!;
    const spared = results.get('encrypted POST, spare(1)')!;
    const pooled = results.get('encrypted POST, pool(1)')!;
    const ratio = (r: Measured) =>
      `${(r.single.p50ms / base.single.p50ms).toFixed(2)}× a clear one's time end to end (${(r.slow.p50ms / base.slow.p50ms).toFixed(2)}× when the seller works 1 ms), ${(base.rps / r.rps).toFixed(2)}× its cost in throughput`;
    console.log(
      `\nan encrypted request (target ≤ 2× end to end): spare ${ratio(spared)}; inline ${ratio(inlined)}; pool ${ratio(pooled)} (at ${connections} connections)`,
    );
    console.log(
      `the agent's share, with jose: encrypt ${agent.encryptMs.toFixed(3)} ms, decrypt the reply ${agent.decryptMs.toFixed(3)} ms of CPU`,
    );
  } finally {
    await processes.stopAll();
    rmSync(work, { recursive: true, force: true });
  }
}

/** One encrypted call checked before measuring: a benchmark of refusals would measure nothing. */
async function checkRoundTrip(port: number, sealed: string, replyKey: Awaited<ReturnType<typeof createReplyKey>>): Promise<void> {
  const res = await request(`http://127.0.0.1:${port}/items`, {
    method: 'POST',
    headers: { host: HOST, 'content-type': 'application/jose' },
    body: sealed,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`the encrypted call answered ${res.statusCode}: ${text}`);
  const reply = await decryptReply(text, replyKey);
  if (!new TextDecoder().decode(reply.plaintext).startsWith('{"items"'))
    throw new Error('the reply did not decrypt to the upstream’s body');
}

/** CPU the agent spends per call with the SDK's helpers (jose on WebCrypto), measured here. */
async function agentShare(jwks: Jwks, plaintext: string): Promise<{ encryptMs: number; decryptMs: number }> {
  const replyKey = await createReplyKey();
  const n = 500;
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await encryptRequest(jwks, plaintext, { replyKey });
  const encrypted = process.cpuUsage(start);
  // A reply to decrypt: encrypted to the reply key as hub does it.
  const { agreeWith, encryptCompactJwe, publicPoint } = await import('../proxy/encryption/compact-jwe.js');
  const reply = encryptCompactJwe(Buffer.from(plaintext), agreeWith(publicPoint(replyKey.publicJwk as { x: string; y: string })), {
    cty: 'application/json',
  });
  const mid = process.cpuUsage();
  for (let i = 0; i < n; i++) await decryptReply(reply, replyKey);
  const decrypted = process.cpuUsage(mid);
  return { encryptMs: (encrypted.user + encrypted.system) / 1000 / n, decryptMs: (decrypted.user + decrypted.system) / 1000 / n };
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bench:jwe failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
