import type { ECDH } from 'node:crypto';
import { Piscina } from 'piscina';
import { workerExecArgv, workerModule } from '../../runtime/worker-module.js';
import {
  type Agreement,
  agreeWith,
  type CompactJwe,
  decryptCompactJwe,
  type EcPrivateJwk,
  encryptCompactJwe,
  recipientOf,
} from './compact-jwe.js';

/**
 * Where the proxy's JWE work runs: on the event loop (`inline`) or on a Piscina pool of worker
 * threads (`pool`). Both do the same three tasks on plain data; bench/jwe.ts measures them side by
 * side under load, and `HUB_JWE_THREADS` picks one (0, the default, is inline: see
 * docs/decisions.md › Encrypted requests for the figures).
 */

export type OpenTask = { kind: 'open'; jwe: CompactJwe; key: EcPrivateJwk };
/** `to` is the recipient's public point, checked on the curve already (`publicPoint`). */
export type AgreeTask = { kind: 'agree'; to: Uint8Array };
/** `under`: an agreement made already, or the recipient's public point to make one with in the same task. */
export type SealTask = { kind: 'seal'; plaintext: Uint8Array; under: Agreement | Uint8Array; header: Record<string, unknown> };
export type JweTask = OpenTask | AgreeTask | SealTask;

export interface JweCodec {
  readonly name: string;
  /** The plaintext, or undefined when the JWE does not decrypt with `key`. */
  open(jwe: CompactJwe, key: EcPrivateJwk): Promise<Buffer | undefined>;
  /** A key agreement with the public point `to`, for one message. */
  agree(to: Uint8Array): Promise<Agreement>;
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
  agree: async (to) => agreeWith(to),
  seal: async (plaintext, under, header) => runJweTask({ kind: 'seal', plaintext, under, header }) as string,
  close: async () => {},
};

export function createJwePool(threads: number): JweCodec {
  const pool = new Piscina({
    filename: workerModule(import.meta.url, 'jwe-worker').href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: 30_000,
    execArgv: workerExecArgv(),
  });
  return {
    name: `pool(${threads})`,
    async open(jwe, key) {
      const plaintext = (await pool.run({ kind: 'open', jwe, key } satisfies OpenTask)) as Uint8Array | undefined;
      // A worker's Buffer arrives as a plain Uint8Array over the same memory.
      return plaintext && Buffer.from(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength);
    },
    agree: (to) => pool.run({ kind: 'agree', to } satisfies AgreeTask),
    seal: (plaintext, under, header) => pool.run({ kind: 'seal', plaintext, under, header } satisfies SealTask),
    close: () => pool.destroy(),
  };
}

/** `threads` 0 works inline; more runs a pool of that many threads. */
export function createJweCodec(threads: number): JweCodec {
  return threads > 0 ? createJwePool(threads) : inlineJweCodec;
}
