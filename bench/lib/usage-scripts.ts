import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UsageSeed } from './usage-seed.js';

/** What a wrk run sends: allowance checks, reports under new keys, or replays of recorded keys. */
export type UsageLoad = 'check' | 'report' | 'replay';

/** Replays cycle over this many keys; a warm-up run records them first. */
export const REPLAY_KEYS = 200;

/**
 * Writes a wrk Lua script that POSTs usage calls round-robin over the seeded requests. Report
 * keys are `<prefix>-<n>`, counted per run, so every run needs its own prefix; replays reuse the
 * first `REPLAY_KEYS` keys of their prefix with the same bodies.
 */
export function writeUsageScript(dir: string, load: UsageLoad, seed: UsageSeed, prefix: string): string {
  const path = join(dir, `${prefix}.lua`);
  const item = `"serviceSlug":"${seed.serviceSlug}","usage":[{"meterSlug":"${seed.meterSlug}","quantity":1}]`;
  const body: Record<UsageLoad, string> = {
    check: `'{"zcRequestId":"' .. id .. '",${item}}'`,
    report: `'{"idempotencyKey":"${prefix}-' .. n .. '","zcRequestId":"' .. id .. '",${item}}'`,
    replay: `'{"idempotencyKey":"${prefix}-' .. n .. '","zcRequestId":"' .. id .. '",${item}}'`,
  };
  const script = jsonPostScript(
    seed.apiKey,
    [`local ids = { ${seed.requestIds.map((id) => `"${id}"`).join(', ')} }`],
    [
      load === 'replay' ? `  local n = (counter % ${REPLAY_KEYS}) + 1` : '  local n = counter',
      '  local id = ids[(n % #ids) + 1]',
      `  return wrk.format(nil, "${load === 'check' ? '/v1/usage/check' : '/v1/usage'}", nil, ${body[load]})`,
    ],
  );
  writeFileSync(path, script);
  return path;
}

/**
 * A wrk Lua script that POSTs JSON with an API key: `setup` lines run once, `request` lines build
 * each request from `counter` (1, 2, …) and end with a `return wrk.format(…)`.
 */
export function jsonPostScript(apiKey: string, setup: string[], request: string[]): string {
  return [
    ...setup,
    'local counter = 0',
    'wrk.method = "POST"',
    'wrk.headers["content-type"] = "application/json"',
    `wrk.headers["authorization"] = "Bearer ${apiKey}"`,
    'request = function()',
    '  counter = counter + 1',
    ...request,
    'end',
    '',
  ].join('\n');
}
