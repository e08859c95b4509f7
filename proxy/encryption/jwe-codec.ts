import { createECDH, type ECDH } from 'node:crypto';
import { Piscina } from 'piscina';
import { workerExecArgv, workerModule } from '../../runtime/worker-module.js';
import {
  type Agreement,
  agreeWith,
  type CompactJwe,
  decryptCompactJwe,
  decryptionParts,
  type EcPrivateJwk,
  encryptCompactJwe,
  recipientOf,
} from './compact-jwe.js';

/**
 * Where the proxy's JWE work runs (`HUB_JWE_MODE`; bench/jwe.ts measures the three side by side,
 * docs/decisions.md › Encrypted requests has the figures):
 * - `inline`: all of it on the event loop;
 * - `spare` (the default): on the event loop, except that while the proxy serves no other request
 *   the reply's key agreement runs on a worker thread, on a core that is otherwise idle, beside
 *   the request's decryption; under load a hop to a worker costs more CPU than it frees;
 * - `pool`: every task on a Piscina pool of worker threads.
 * All three do the same tasks on plain data.
 */

export type OpenTask = { kind: 'open'; jwe: CompactJwe; key: EcPrivateJwk };
/** `to` is the recipient's public point, checked on the curve already (`publicPoint`). */
export type AgreeTask = { kind: 'agree'; to: Uint8Array };
/** `under`: an agreement made already, or the recipient's public point to make one with in the same task. */
export type SealTask = { kind: 'seal'; plaintext: Uint8Array; under: Agreement | Uint8Array; header: Record<string, unknown> };
export type JweTask = OpenTask | AgreeTask | SealTask;

export type JweMode = 'inline' | 'spare' | 'pool';

export interface JweCodec {
  readonly name: string;
  /** The plaintext, or undefined when the JWE does not decrypt with `key`. */
  open(jwe: CompactJwe, key: EcPrivateJwk): Promise<Buffer | undefined>;
  /**
   * A key agreement with the public point `to`, for one message. On the event loop it runs from
   * the loop's next check phase, after the work of the current turn (such as writing a request).
   */
  agree(to: Uint8Array): Promise<Agreement>;
  /**
   * A key agreement started at once on a worker thread, beside the work the event loop still has
   * to do; undefined when this codec keeps it on the loop: it has no thread, or the proxy has
   * `othersInProgress` other requests in progress for the cores to serve.
   */
  agreeEarly(to: Uint8Array, othersInProgress: number): Promise<Agreement> | undefined;
  /**
   * A Compact JWE of `plaintext` under `under`: an agreement used for no other message, or the
   * recipient's public point (a fresh agreement, made in the same task). `header` adds protected
   * parameters.
   */
  seal(plaintext: Uint8Array, under: Agreement | Uint8Array, header: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

/** The sellers' keys by their private scalar, imported once per thread. */
const recipients = new Map<string, ECDH>();

function cachedRecipient(jwk: EcPrivateJwk): ECDH {
  let recipient = recipients.get(jwk.d);
  if (!recipient) {
    if (recipients.size >= 1024) recipients.clear();
    recipient = recipientOf(jwk);
    recipients.set(jwk.d, recipient);
  }
  return recipient;
}

/** One task, on whichever thread runs it. */
export function runJweTask(task: JweTask): Uint8Array | string | Agreement | undefined {
  if (task.kind === 'agree') return agreeWith(task.to);
  if (task.kind === 'seal') {
    const agreement = task.under instanceof Uint8Array ? agreeWith(task.under) : task.under;
    return encryptCompactJwe(task.plaintext, agreement, task.header);
  }
  try {
    return decryptCompactJwe(task.jwe, cachedRecipient(task.key));
  } catch {
    return undefined;
  }
}

export const inlineJweCodec: JweCodec = {
  name: 'inline',
  open: async (jwe, key) => runJweTask({ kind: 'open', jwe, key }) as Buffer | undefined,
  agree: (to) =>
    new Promise((resolve, reject) =>
      setImmediate(() => {
        try {
          resolve(agreeWith(to));
        } catch (err) {
          reject(err);
        }
      }),
    ),
  agreeEarly: () => undefined,
  seal: async (plaintext, under, header) => runJweTask({ kind: 'seal', plaintext, under, header }) as string,
  close: async () => {},
};

function createJwePool(threads: number): JweCodec {
  const pool = new Piscina({
    filename: workerModule(import.meta.url, 'jwe-worker').href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: 30_000,
    execArgv: workerExecArgv(),
  });
  const agree = (to: Uint8Array): Promise<Agreement> => pool.run({ kind: 'agree', to } satisfies AgreeTask);
  return {
    name: `pool(${threads})`,
    async open(jwe, key) {
      const task = { kind: 'open', jwe: decryptionParts(jwe), key } satisfies OpenTask;
      const plaintext = (await pool.run(task)) as Uint8Array | undefined;
      // A worker's Buffer arrives as a plain Uint8Array over the same memory.
      return plaintext && Buffer.from(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength);
    },
    agree,
    agreeEarly: agree,
    seal: (plaintext, under, header) => pool.run({ kind: 'seal', plaintext, under, header } satisfies SealTask),
    close: () => pool.destroy(),
  };
}

/**
 * Inline, with `threads` worker threads for early key agreements while fewer than `threads`
 * other requests are in progress. AES-GCM, which costs less than a hop to a worker, stays on the
 * loop. The threads start with the first encrypted request, and serve once they are up: a
 * proxy that never sees one never starts them.
 */
function createSpareCodec(threads: number): JweCodec {
  let pool: JweCodec | undefined;
  let ready = false;
  const start = (): JweCodec => {
    const started = createJwePool(threads);
    started.agree(createECDH('prime256v1').generateKeys()).then(
      () => {
        ready = true;
      },
      () => {},
    );
    return started;
  };
  return {
    ...inlineJweCodec,
    name: `spare(${threads})`,
    agreeEarly(to, othersInProgress) {
      pool ??= start();
      return ready && othersInProgress < threads ? pool.agree(to) : undefined;
    },
    close: async () => pool?.close(),
  };
}

export function createJweCodec(mode: JweMode, threads: number): JweCodec {
  if (mode === 'inline') return inlineJweCodec;
  return mode === 'pool' ? createJwePool(threads) : createSpareCodec(threads);
}
