import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { type Address, bytesToHex, keccak256, recoverAddress } from 'viem';
import { workerExecArgv, workerModule } from '../../runtime/worker-module.js';
import type { SignedAuthorization } from '../../shared/payments/eip3009.js';
import { parseRecoverableSignature, type RecoverableSignature, transferAuthorizationDigest } from './transfer-authorization.js';

/**
 * Who signed an EIP-3009 transfer authorization, in one place: the `Recoverer` backends that do
 * `ecrecover` (native libsecp256k1 or viem's pure JS), and the `SignerRecovery` the facilitator
 * asks, inline on the calling thread or on a worker pool (recover-worker.ts). bench/recover.ts
 * measures every combination.
 */

/**
 * Public-key recovery (`ecrecover`): which address signed a 32-byte digest. Two backends, measured
 * by bench/recover.ts: the native libsecp256k1 binding and viem's pure JS.
 */
export interface Recoverer {
  readonly name: 'native-secp256k1' | 'viem';
  /** The signer's address, lowercase; throws if no public key recovers. */
  recoverAddress(digest: Uint8Array, signature: RecoverableSignature): Promise<Address>;
}

/** `default`: native when its binding loads on this platform, else viem. `native` throws when it does not load. */
export type RecovererChoice = 'default' | 'native' | 'viem';

let fallback: Recoverer | undefined;

export async function loadRecoverer(choice: RecovererChoice = 'default'): Promise<Recoverer> {
  if (choice === 'native') return nativeRecoverer();
  if (choice === 'viem') return viemRecoverer;
  if (!fallback) {
    try {
      fallback = nativeRecoverer();
    } catch {
      fallback = viemRecoverer;
    }
  }
  return fallback;
}

/** The default backend, chosen once per thread. */
export function defaultRecoverer(): Promise<Recoverer> {
  return loadRecoverer('default');
}

type Secp256k1 = typeof import('secp256k1');

/** The native libsecp256k1 binding; throws when it does not load on this platform. */
export function nativeSecp256k1(): Secp256k1 {
  // `secp256k1`'s main entry silently falls back to a pure-JS implementation when the binding does
  // not load; its `bindings.js` entry is the binding or an exception, so a fallback stays visible.
  return createRequire(import.meta.url)('secp256k1/bindings.js') as Secp256k1;
}

/** Throws when the native binding does not load on this platform. */
export function nativeRecoverer(): Recoverer {
  const binding = nativeSecp256k1();
  return {
    name: 'native-secp256k1',
    async recoverAddress(digest, signature) {
      const publicKey = binding.ecdsaRecover(signature.compact, signature.recoveryId, digest, false);
      // Uncompressed key is 0x04 ‖ X ‖ Y; the address is the last 20 bytes of keccak(X ‖ Y).
      return bytesToHex(keccak256(publicKey.subarray(1), 'bytes').subarray(12)) as Address;
    },
  };
}

/** viem's pure-JS recovery (noble-curves): works everywhere, ~2 ms per signature. */
export const viemRecoverer: Recoverer = {
  name: 'viem',
  async recoverAddress(digest, signature) {
    const address = await recoverAddress({ hash: digest, signature: { r: signature.r, s: signature.s, yParity: signature.recoveryId } });
    return address.toLowerCase() as typeof address;
  },
};

export type { SignedAuthorization };

/** Recovers on the calling thread (`inlineSignerRecovery`) or on a worker pool (`createRecoverPool`); the input is plain data (bigints included), so it crosses to a worker as is. */
export interface SignerRecovery {
  readonly name: string;
  /** The signer's lowercase address, or undefined when the signature is malformed or recovers nothing. */
  recoverSigner(input: SignedAuthorization): Promise<Address | undefined>;
  close(): Promise<void>;
}

export async function recoverAuthorizationSigner(input: SignedAuthorization, recoverer: Recoverer): Promise<Address | undefined> {
  const signature = parseRecoverableSignature(input.signature);
  if (!signature) return undefined;
  const digest = transferAuthorizationDigest(input.domain, input.authorization);
  try {
    return await recoverer.recoverAddress(digest, signature);
  } catch {
    return undefined;
  }
}

export async function inlineSignerRecovery(recoverer?: Recoverer): Promise<SignerRecovery> {
  const backend = recoverer ?? (await defaultRecoverer());
  return {
    name: `inline:${backend.name}`,
    recoverSigner: (input) => recoverAuthorizationSigner(input, backend),
    close: async () => {},
  };
}

export type RecoverPoolOptions = { threads?: number; idleTimeoutMs?: number; backend?: RecovererChoice };

/**
 * Signer recovery on a Piscina worker pool. A round trip to a worker costs more than a native
 * recovery (digest included), so with the native backend the pool lowers throughput; it pays off
 * for the pure-JS backend (milliseconds per signature), keeping the event loop free.
 * `defaultSignerRecovery` chooses accordingly.
 */
export function createRecoverPool(options: RecoverPoolOptions = {}): SignerRecovery {
  const threads = options.threads ?? Math.max(1, availableParallelism() - 1);
  const pool = new Piscina({
    filename: workerModule(import.meta.url, 'recover-worker').href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: options.idleTimeoutMs ?? 30_000,
    execArgv: workerExecArgv(),
    workerData: { backend: options.backend ?? 'default' },
  });
  return {
    name: `pool(${threads}):${options.backend ?? 'default'}`,
    recoverSigner: (input) => pool.run(input),
    close: () => pool.destroy(),
  };
}

/**
 * Inline recovery with the native binding; a worker pool only when the binding did not load and
 * each recovery would block the event loop for milliseconds (bench/recover.ts measures both).
 */
export async function defaultSignerRecovery(): Promise<SignerRecovery> {
  const recoverer = await defaultRecoverer();
  return recoverer.name === 'native-secp256k1' ? inlineSignerRecovery(recoverer) : createRecoverPool();
}
