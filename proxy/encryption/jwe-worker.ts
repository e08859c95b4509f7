import type { Agreement } from './compact-jwe.js';
import { type JweTask, runJweTask } from './jwe-codec.js';

/** Piscina task: one JWE opened or sealed, or one key agreement worked out, on a worker thread. */
export default function jweTask(task: JweTask): Uint8Array | string | Agreement | undefined {
  return runJweTask(task);
}
