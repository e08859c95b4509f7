import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import { type MetricsSnapshot, renderMetrics } from '../proxy/metrics.js';
import { createMetricsServer } from '../proxy/metrics-server.js';
import { askForMetrics, relaySiblingNotes } from '../proxy/worker-channel.js';
import { closeServer, listen } from '../runtime/http-server.js';
import { createLogger } from '../runtime/logger.js';
import { onParentExit } from '../runtime/process.js';
import type { HubConfig } from '../shared/config.js';
import { describeRestart, judgeExit, restartPolicy } from './restart-policy.js';
import { CONFIG_ERROR_EXIT, supervised } from './supervision.js';

/**
 * `hub start proxy` with `HUB_PROXY_WORKERS` above 1: this process holds the pay URL's port and
 * runs that many workers (node:cluster, each a whole proxy: `hub start proxy` again) that share
 * it. It serves no request itself: it hands each new connection to the next worker in turn
 * (Node's round-robin on Linux), restarts a worker that exits as `hub start` restarts its
 * processes (restart-policy.ts), serves the metrics port with every worker's counters, and
 * drains the workers on SIGTERM (each stops accepting and finishes what it is serving).
 */
const METRICS_ASK_TIMEOUT_MS = 1_000;
/** Past a worker's own bound on finishing its requests (closeServer's 10 s) and its shutdown. */
const DRAIN_BOUND_MS = 20_000;

/** Runs the workers until SIGTERM (exit code 0) or a worker that cannot start (its exit code). */
export async function runProxyWorkers(config: HubConfig): Promise<number> {
  const logger = createLogger('proxy', config.logLevel);
  const policy = restartPolicy(config);
  /** The running worker of each slot (1…N); a slot keeps its number across restarts. */
  const slots = new Map<number, Worker>();
  const listening = new Set<Worker>();
  const metricsServer = config.proxy.metricsPort === undefined ? undefined : await serveMetrics(config, slots, listening);

  return new Promise((resolve) => {
    let stopping = false;
    let exitCode = 0;
    let started = 0;

    const finishIfDone = () => {
      if (!stopping || slots.size > 0) return;
      void (metricsServer ? closeServer(metricsServer, 1_000) : Promise.resolve()).then(() => resolve(exitCode));
    };

    const stopAll = () => {
      if (stopping) return;
      stopping = true;
      for (const worker of slots.values()) worker.process.kill('SIGTERM');
      setTimeout(() => {
        for (const worker of slots.values()) worker.process.kill('SIGKILL');
      }, DRAIN_BOUND_MS).unref();
      finishIfDone();
    };

    const launch = (slot: number, crashLoop: number, firstRun: boolean) => {
      const startedAt = Date.now();
      const worker = cluster.fork();
      slots.set(slot, worker);
      relaySiblingNotes(worker, () => slots.values());
      worker.once('listening', () => {
        listening.add(worker);
        if (firstRun && ++started === config.proxy.workers)
          logger.info({ workers: started, port: config.proxy.port }, 'proxy workers listening');
      });
      worker.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
        listening.delete(worker);
        if (slots.get(slot) === worker) slots.delete(slot);
        if (stopping) return finishIfDone();
        const ranFor = Date.now() - startedAt;
        const verdict = judgeExit({ code, signal }, ranFor, { first: firstRun, crashLoop }, policy);
        // The worker said why on its way out; the process that started this one decides the rest.
        if (verdict.kind !== 'restart') {
          // Run by hand, a configuration error exits 1, as hub's other processes do (D-003).
          exitCode = verdict.kind === 'config-error' ? (supervised() ? CONFIG_ERROR_EXIT : 1) : (code ?? 1);
          return stopAll();
        }
        process.stderr.write(`${describeRestart(`proxy worker ${slot}`, { code, signal }, ranFor, verdict, policy)}\n`);
        if (verdict.delayMs === 0) return launch(slot, verdict.crashLoop, false);
        setTimeout(() => {
          if (!stopping) launch(slot, verdict.crashLoop, false);
        }, verdict.delayMs).unref();
      });
    };

    process.on('SIGTERM', stopAll);
    process.on('SIGINT', stopAll);
    if (supervised()) onParentExit(stopAll);
    for (let slot = 1; slot <= config.proxy.workers; slot++) launch(slot, 0, true);
  });
}

/** The metrics port, answered with each listening worker's counters, labelled by its slot. */
async function serveMetrics(config: HubConfig, slots: Map<number, Worker>, listening: Set<Worker>): Promise<Server> {
  const gather = async () => {
    const asked = [...slots].filter(([, worker]) => listening.has(worker));
    const answers = await Promise.all(
      asked.map(async ([slot, worker]) => ({ slot, snapshot: await askForMetrics(worker, METRICS_ASK_TIMEOUT_MS) })),
    );
    return renderMetrics(
      answers
        .filter((a): a is { slot: number; snapshot: MetricsSnapshot } => a.snapshot !== undefined)
        .sort((a, b) => a.slot - b.slot)
        .map(({ slot, snapshot }) => ({ labels: { worker: String(slot) }, snapshot })),
    );
  };
  const server = createMetricsServer(gather, config, createLogger('proxy', config.logLevel));
  await listen(server, config.proxy.metricsPort!, config.host);
  return server;
}
