import cluster, { type Worker } from 'node:cluster';
import type { MetricsSnapshot, ProxyMetrics } from './metrics.js';

/**
 * What a proxy worker and the process that runs the workers (cli/proxy-workers.ts) tell each
 * other over the cluster's channel: the primary asks each worker for its counters when the
 * metrics port is scraped, and relays a worker's note to its siblings when it changed something
 * they cache (an agent whose owner it just changed). Both halves live here so the messages are
 * spelled once. A proxy that is one process (no cluster) sends and answers nothing.
 */
type Message =
  | { hub: 'metrics?'; id: number }
  | { hub: 'metrics'; id: number; snapshot: MetricsSnapshot }
  | { hub: 'sibling'; note: SiblingNote };

/** A change a worker made that its siblings' caches must not hide. */
export type SiblingNote = { kind: 'forget-agent'; agentId: string };

function isMessage(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && typeof (value as { hub?: unknown }).hub === 'string';
}

/** Whether this process is one of several proxy workers sharing the port. */
export function isProxyWorker(): boolean {
  return cluster.isWorker;
}

/** Worker side: answers the primary's asks for this process's counters. */
export function answerMetricsAsks(metrics: ProxyMetrics): void {
  process.on('message', (message: unknown) => {
    if (!isMessage(message) || message.hub !== 'metrics?') return;
    void metrics.snapshot().then((snapshot) => send({ hub: 'metrics', id: message.id, snapshot }));
  });
}

/** Worker side: tells the other workers of a change (the primary relays it); nothing when alone. */
export function tellSiblings(note: SiblingNote): void {
  if (cluster.isWorker) send({ hub: 'sibling', note });
}

/** Worker side: acts on a sibling's note. */
export function onSiblingNote(handle: (note: SiblingNote) => void): void {
  process.on('message', (message: unknown) => {
    if (isMessage(message) && message.hub === 'sibling') handle(message.note);
  });
}

function send(message: Message): void {
  // A worker whose primary is gone is exiting (cluster ends it on disconnect): nothing to tell.
  if (process.connected) process.send?.(message);
}

let lastAsk = 0;

/**
 * Primary side: a worker's counters, or undefined when it does not answer within `timeoutMs`
 * (busy with a request burst, or exiting): a scrape then shows the others rather than wait.
 */
export function askForMetrics(worker: Worker, timeoutMs: number): Promise<MetricsSnapshot | undefined> {
  const id = ++lastAsk;
  return new Promise((resolve) => {
    const done = (snapshot: MetricsSnapshot | undefined) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      resolve(snapshot);
    };
    const onMessage = (message: unknown) => {
      if (isMessage(message) && message.hub === 'metrics' && message.id === id) done(message.snapshot);
    };
    const onExit = () => done(undefined);
    const timer = setTimeout(() => done(undefined), timeoutMs);
    worker.on('message', onMessage);
    worker.once('exit', onExit);
    if (worker.isConnected()) worker.send({ hub: 'metrics?', id } satisfies Message, undefined, () => {});
  });
}

/** Primary side: passes each note a worker sends on to every other worker running. */
export function relaySiblingNotes(from: Worker, siblings: () => Iterable<Worker>): void {
  from.on('message', (message: unknown) => {
    if (!isMessage(message) || message.hub !== 'sibling') return;
    for (const worker of siblings()) if (worker !== from && worker.isConnected()) worker.send(message, undefined, () => {});
  });
}
