/**
 * What checking an internal answer against its output schema (shared/contract-outputs.ts) costs,
 * for the answers of a paid call's hot path, against reading the same answer's JSON. Prints µs of
 * CPU per answer; docs/decisions.md#D-207 keeps the figures.
 *
 *   node --import tsx bench/contract-outputs.ts [--seconds 1]
 */
import { parseArgs } from 'node:util';
import type { ProcedureName, ProcedureOutput } from '../shared/contract.js';
import { checkOutput } from '../shared/contract-outputs.js';
import { newId } from '../shared/ids.js';
import { sampleAnswers } from '../test/helpers/contract-answers.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '1' } } });
const seconds = Number(values.seconds);

const sample = sampleAnswers();
// A challenge as a priced plan's buyer sees it: the plan and the standing that names it.
const challenge: ProcedureOutput<'issuePaymentChallenge'> = {
  kind: 'challenge',
  challenge: {
    ...sample.issued,
    plan: { id: newId('plan'), slug: 'per-call', billingMode: 'payg' },
    standing: { reason: 'usage_exhausted', accessId: newId('access'), sells: true },
  },
};
const { claimed, billed: settled, captured } = sample;

/**
 * Runs `fn` for `seconds` of wall time (after a short warm-up) and answers µs of this process's CPU
 * per run: on a shared machine, time the process waited for a core is not counted.
 */
function measure(fn: () => void): number {
  const run = (ms: number) => {
    const end = performance.now() + ms;
    let runs = 0;
    while (performance.now() < end) {
      for (let i = 0; i < 100; i++) fn();
      runs += 100;
    }
    return runs;
  };
  run(200);
  const before = process.cpuUsage();
  const runs = run(seconds * 1000);
  const { user, system } = process.cpuUsage(before);
  return (user + system) / runs;
}

const answers: [ProcedureName, unknown][] = [
  ['issuePaymentChallenge', challenge],
  ['claimPaidRequest', claimed],
  ['settlePaidRequest', settled],
  ['captureUsage', captured],
];
const rows = answers.map(([name, answer]) => {
  const body = JSON.stringify([{ result: { data: answer } }]);
  const data = (JSON.parse(body) as [{ result: { data: unknown } }])[0].result.data;
  return {
    procedure: name,
    bytes: body.length,
    'check µs': Number(measure(() => checkOutput(name, data, 'proxy')).toFixed(2)),
    'JSON.parse µs': Number(measure(() => JSON.parse(body)).toFixed(2)),
  };
});
console.table(rows);
