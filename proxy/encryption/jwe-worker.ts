import { type OpenTask, runJweTask, type SealTask } from './jwe-codec.js';

/** Piscina task: one JWE opened or sealed on a worker thread. */
export default function jweTask(task: OpenTask | SealTask): Uint8Array | string | undefined {
  return runJweTask(task);
}
