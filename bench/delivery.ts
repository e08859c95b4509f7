// npm run bench:delivery — account writes delivered per second, the CPU each write costs, and the
// control-plane's memory while a backlog drains.
//
// On each database (SQLite; PostgreSQL when one answers at HUB_BENCH_PG_URL, default
// postgresql://postgres@127.0.0.1:5432/postgres, on a scratch database dropped afterwards;
// BENCH_POSTGRES=off skips it), BENCH_ROUNDS times (default 3, the databases in turn, each round
// in the other order): BENCH_WRITES pending account writes (default 50,000, one account each) are
// seeded, then hub's account-write worker drains them to a fast local receiver (the SDK's account
// endpoint, in a process of its own, started afresh for each drain). The reference, measured
// against the same receiver, is a plain client posting the same signed writes with the same
// concurrency and no outbox: the ratio is what the outbox's bookkeeping costs. The CPU each write
// delivered costs is read per process: the worker (this process, which also runs the database's
// driver, and SQLite itself; the heap sampling's own collections left out), PostgreSQL's backends
// serving the scratch database (from /proc, when the server runs on this machine; its shared WAL
// writer and checkpointer are not counted), and the receiver. The drain is followed by the
// receiver's count of writes taken, not by counting rows in the database being measured. The run
// ends with PostgreSQL's writes/s over SQLite's in each round, and their median. The live heap is
// sampled as the backlog drains; it should stay flat whatever the backlog.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Agent, request } from 'undici';
import { type Db, openDatabase } from '../control-plane/db/client.js';
import { migrateDatabase } from '../control-plane/db/migrate.js';
import { AccountWriteWorker } from '../control-plane/delivery/account-write-worker.js';
import { type AccountSnapshot, accountWriteBody, serializeSnapshot } from '../control-plane/storefront/account-write.js';
import { parseDatabaseUrl } from '../shared/config.js';
import { newId } from '../shared/ids.js';
import { sealSecret } from '../shared/secret-box.js';
import { nowSeconds, sha256Hex, signatureHeader } from '../shared/signature.js';
import { newToken } from '../shared/tokens.js';
import { cpuMs } from './lib/cpu.js';
import { BackendCpu } from './lib/postgres-cpu.js';
import { freePort, Processes, waitUntilUp } from './lib/processes.js';
import { benchPostgres } from './lib/scratch-postgres.js';

const here = dirname(fileURLToPath(import.meta.url));
const WRITES = Number(process.env.BENCH_WRITES ?? 50_000);
const REFERENCE_WRITES = Math.min(WRITES, 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = 64;
const MB = 1024 * 1024;

type Row = {
  round: number;
  database: 'SQLite' | 'PostgreSQL';
  referencePerSecond: number;
  hubPerSecond: number;
  /** CPU of this process (the worker and the driver) per write delivered. */
  cpuMsPerWrite: number;
  /** CPU of PostgreSQL's backends per write delivered (undefined on SQLite, or a server elsewhere). */
  databaseCpuMsPerWrite: number | undefined;
  /** CPU of the receiver per write delivered. */
  receiverCpuMsPerWrite: number;
  heapMb: number[];
  seconds: number;
};

async function main() {
  const rows: Row[] = [];
  // Rounds of both databases, each round in the other order (ABBA): load from outside the
  // benchmark drifts slowly, and a ratio taken within a round, of drains minutes apart at most,
  // is less at its mercy than one of a single drain each.
  const probe = await benchPostgres(console.log);
  await probe?.drop();
  const postgres = probe !== undefined;
  for (let round = 1; round <= ROUNDS; round++) {
    const order = postgres ? (round % 2 === 1 ? ['SQLite', 'PostgreSQL'] : ['PostgreSQL', 'SQLite']) : ['SQLite'];
    for (const database of order) rows.push(await drainOn(database as Row['database'], round));
  }

  console.log(
    `\nAccount writes to the SDK's endpoint on loopback, ${WRITES} pending, ${CONCURRENCY} at a time, ${ROUNDS} rounds, ${new Date().toISOString().slice(0, 10)}\n`,
  );
  console.log(
    '| round | database | plain client writes/s | hub writes/s | hub / plain | CPU ms per write: worker + PostgreSQL + receiver = all | drain s | heap MB at 0 / 25 / 50 / 75 / 100 % |',
  );
  console.log('|---:|---|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    const all = r.cpuMsPerWrite + (r.databaseCpuMsPerWrite ?? 0) + r.receiverCpuMsPerWrite;
    const cpu = [r.cpuMsPerWrite, r.databaseCpuMsPerWrite, r.receiverCpuMsPerWrite].map((ms) => (ms === undefined ? '–' : ms.toFixed(2)));
    console.log(
      `| ${r.round} | ${r.database} | ${r.referencePerSecond.toFixed(0)} | ${r.hubPerSecond.toFixed(0)} | ${(r.hubPerSecond / r.referencePerSecond).toFixed(2)}× | ${cpu.join(' + ')} = ${all.toFixed(2)} | ${r.seconds.toFixed(1)} | ${r.heapMb.map((m) => m.toFixed(0)).join(' / ')} |`,
    );
  }
  const ratios: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const of = (database: string) => rows.find((r) => r.round === round && r.database === database);
    const [lite, onPg] = [of('SQLite'), of('PostgreSQL')];
    if (lite && onPg) ratios.push(onPg.hubPerSecond / lite.hubPerSecond);
  }
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = sorted.length / 2;
    return Number.isInteger(middle) ? (sorted[middle - 1]! + sorted[middle]!) / 2 : sorted[Math.floor(middle)]!;
  };
  for (const database of ['SQLite', 'PostgreSQL']) {
    const mine = rows.filter((r) => r.database === database);
    if (mine.length === 0) continue;
    const all = mine.map((r) => r.cpuMsPerWrite + (r.databaseCpuMsPerWrite ?? 0) + r.receiverCpuMsPerWrite);
    console.log(
      `${database}: median ${median(mine.map((r) => r.hubPerSecond)).toFixed(0)} writes/s, ${median(all).toFixed(2)} ms of CPU per write in all`,
    );
  }
  if (ratios.length) {
    console.log(
      `\nhub writes/s on PostgreSQL / on SQLite, per round: ${ratios.map((r) => `${r.toFixed(2)}×`).join(', ')}; median ${median(ratios).toFixed(2)}× (target ≥ 0.80×)`,
    );
  }
}

/** One drain on a fresh database of the kind, to a fresh receiver. */
async function drainOn(database: Row['database'], round: number): Promise<Row> {
  const processes = new Processes();
  const kid = newId('signingSecret');
  const secret = newToken('signingSecret');
  const port = await freePort();
  const receiverProcess = processes.start(process.execPath, ['--import', 'tsx', join(here, 'servers/account-receiver.ts'), String(port)], {
    BENCH_SIGNING_KID: kid,
    BENCH_SIGNING_SECRET: secret,
  });
  const receiver = { url: `http://127.0.0.1:${port}`, pid: receiverProcess.pid! };
  try {
    await waitUntilUp(`${receiver.url}/healthz`);
    if (database === 'SQLite') {
      const work = mkdtempSync(join(tmpdir(), 'hub-bench-delivery-'));
      try {
        return { round, ...(await measure(database, `file:${join(work, 'hub.db')}`, receiver, kid, secret)) };
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    }
    const scratch = (await benchPostgres(console.log))!;
    try {
      return { round, ...(await measure(database, scratch.url, receiver, kid, secret)) };
    } finally {
      await scratch.drop();
    }
  } finally {
    await processes.stopAll();
  }
}

type Receiver = { url: string; pid: number };

async function measure(
  database: Row['database'],
  url: string,
  receiver: Receiver,
  kid: string,
  secret: string,
): Promise<Omit<Row, 'round'>> {
  const config = parseDatabaseUrl(url);
  await migrateDatabase(config);
  const { db, close } = await openDatabase(config, { poolSize: 10 });
  try {
    const masterKey = randomBytes(32);
    const world = await seed(db, masterKey, `${receiver.url}/zeroclick/access`, kid, secret);
    // PostgreSQL plans from table statistics, which a bulk load leaves stale until autovacuum
    // analyzes the tables (within a minute or so in service); measured right after the load, ask now.
    if (config.provider === 'postgresql') await db.$executeRawUnsafe('ANALYZE');
    console.log(`${database}: seeded ${WRITES} pending writes`);

    const referencePerSecond = await plainClient(`${receiver.url}/zeroclick/access`, kid, secret, world.snapshot);
    console.log(`${database}: plain client ${referencePerSecond.toFixed(0)} writes/s`);

    const worker = new AccountWriteWorker(db, masterKey, {}, pino({ level: 'silent' }), { batch: CONCURRENCY });
    // The live heap (after a full collection) before the drain, as it passes each quarter of the
    // backlog, and after it: garbage not yet collected is not growth. A full collection stops the
    // worker while it runs, so the drain is sampled at those five points only, and the collections'
    // time and CPU are the sampling's: left out of the drain's seconds and the CPU per write.
    const heapMb: number[] = [];
    let samplingMs = 0;
    let samplingCpuMicros = 0;
    const sampleHeap = () => {
      const [wall, cpu] = [performance.now(), process.cpuUsage()];
      global.gc?.();
      heapMb.push(process.memoryUsage().heapUsed / MB);
      const spent = process.cpuUsage(cpu);
      samplingCpuMicros += spent.user + spent.system;
      samplingMs += performance.now() - wall;
    };
    sampleHeap();
    const taken = async () => Number(await (await fetch(`${receiver.url}/taken`)).text());
    const takenBefore = await taken();
    const backends = config.provider === 'postgresql' ? await BackendCpu.start(db) : undefined;
    const receiverCpuBefore = cpuMs([receiver.pid]);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    [samplingMs, samplingCpuMicros] = [0, 0];
    // Drained as hub drains it: the running worker, whose next pass sends while the last records.
    worker.start();
    // Followed by the receiver's count, then, once it has taken every write, by whether any row is
    // left to record: counting the backlog's rows at each look would load the database measured.
    const left = () => db.accountWrite.findFirst({ where: { status: { in: ['pending', 'delivering'] } }, select: { id: true } });
    for (let look = 1; ; look++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const drained = (await taken()) - takenBefore;
      while (heapMb.length < 4 && drained >= (WRITES * heapMb.length) / 4) sampleHeap();
      if (look % 5 === 0) await backends?.sample();
      if (drained >= WRITES && !(await left())) break;
    }
    await worker.stop();
    const seconds = (performance.now() - started - samplingMs) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    await backends?.sample();
    const receiverCpu = cpuMs([receiver.pid]) - receiverCpuBefore;
    const workerCpuMicros = cpu.user + cpu.system - samplingCpuMicros;
    sampleHeap();
    const applied = await db.accountWrite.count({ where: { status: 'applied' } });
    if (applied !== WRITES) throw new Error(`${database}: ${applied} of ${WRITES} writes applied`);
    return {
      database,
      referencePerSecond,
      hubPerSecond: WRITES / seconds,
      cpuMsPerWrite: workerCpuMicros / 1000 / WRITES,
      databaseCpuMsPerWrite: backends ? backends.total() / WRITES : undefined,
      receiverCpuMsPerWrite: receiverCpu / WRITES,
      heapMb,
      seconds,
    };
  } finally {
    await close();
  }
}

/** One stateful seller with an agent and a plan, and WRITES accounts each with its first write pending. */
async function seed(db: Db, masterKey: Buffer, endpoint: string, kid: string, secret: string) {
  const organizationId = newId('organization');
  const sellerId = newId('seller');
  const serviceId = newId('service');
  const planId = newId('plan');
  const agentId = newId('agent');
  await db.organization.create({ data: { id: organizationId, name: 'Bench' } });
  await db.seller.create({
    data: {
      id: sellerId,
      organizationId,
      name: 'Bench',
      slug: `bench-${randomBytes(3).toString('hex')}`,
      upstreamBaseUrl: 'http://127.0.0.1:9',
      accessEndpointUrl: endpoint,
      stateful: true,
    },
  });
  await db.signingSecret.create({ data: { id: kid, sellerId, encryptedSecret: sealSecret(masterKey, secret), status: 'active' } });
  await db.service.create({ data: { id: serviceId, organizationId, sellerId, name: 'Bench', slug: 'bench' } });
  await db.plan.create({
    data: {
      id: planId,
      organizationId,
      serviceId,
      name: 'Monthly',
      slug: 'monthly',
      billingMode: 'subscription',
      interval: 'month',
      basePriceMicros: 2_000_000n,
      verifiedEmailPolicy: 'off',
    },
  });
  await db.agent.create({ data: { id: agentId, walletAddress: `0x${randomBytes(20).toString('hex')}` } });
  const now = new Date();
  const snapshot = (accessId: string): AccountSnapshot => ({
    accessId,
    agentId,
    buyerId: null,
    buyerEmail: null,
    stateVersion: 1,
    plan: { slug: 'monthly', name: 'Monthly', billingMode: 'subscription', interval: 'month', basePriceMicros: 2_000_000n },
    period: { start: now, end: new Date(now.getTime() + 30 * 86_400_000) },
    creditGrantedMicros: null,
    creditReversedMicros: 0n,
    status: 'active',
  });
  for (let done = 0; done < WRITES; done += 1_000) {
    const ids = Array.from({ length: Math.min(1_000, WRITES - done) }, () => newId('access'));
    await db.access.createMany({
      data: ids.map((id) => ({
        id,
        sellerId,
        planId,
        agentId,
        status: 'active',
        periodStart: now,
        stateVersion: 1,
        provisioningState: 'pending',
      })),
    });
    await db.accountWrite.createMany({
      data: ids.map((accessId) => ({
        id: newId('accountWrite'),
        accessId,
        kind: 'write',
        stateVersion: 1,
        bodyJson: serializeSnapshot(snapshot(accessId)),
        status: 'pending',
      })),
    });
  }
  return { snapshot };
}

/** The reference: the same signed writes posted by a plain undici client, CONCURRENCY at a time. */
async function plainClient(
  endpoint: string,
  kid: string,
  secret: string,
  snapshot: (accessId: string) => AccountSnapshot,
): Promise<number> {
  const url = new URL(endpoint);
  const dispatcher = new Agent({ connections: CONCURRENCY });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REFERENCE_WRITES) {
        next++;
        const write = snapshot(newId('access'));
        const body = Buffer.from(JSON.stringify(accountWriteBody(write, 'original')));
        const requestId = `${write.accessId}:1`;
        const res = await request(url, {
          method: 'POST',
          dispatcher,
          body,
          headers: {
            'content-type': 'application/json',
            'hub-request-id': requestId,
            'hub-agent-id': write.agentId,
            'hub-anonymous-id': write.agentId,
            'hub-signature': signatureHeader({
              timestamp: nowSeconds(),
              method: 'POST',
              pathAndQuery: url.pathname,
              bodySha256: sha256Hex(body),
              requestId,
              agentId: write.agentId,
              purpose: 'access.write',
              kid,
              secret,
            }),
          },
        });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`the receiver answered ${res.statusCode}`);
      }
    }),
  );
  const perSecond = REFERENCE_WRITES / ((performance.now() - started) / 1000);
  await dispatcher.close();
  return perSecond;
}

await main();
