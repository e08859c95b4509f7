import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  codeBlocks,
  missingOutput,
  readerEnvironment,
  repoRoot,
  ShellSession,
  sandboxCheckout,
  shellSteps,
  waitUntilAnswering,
} from '../helpers/doc-blocks.js';

// The README, top to bottom, as a new user runs it: in a checkout of its own (linked to this one's
// installed dependencies), one terminal, hub's default ports. Every shell block runs as written
// unless a comment before it says why not; every output it shows must appear.

const PORTS = [8400, 8402, 8500];

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

t.test('every shell block in README.md runs as written, top to bottom', async (t) => {
  for (const port of PORTS) {
    if (!(await portIsFree(port))) return void t.fail(`the README runs hub on its default ports: ${port} is taken`);
  }
  const { checkout } = sandboxCheckout(t);
  const shell = new ShellSession(checkout, mkdtempSync(join(tmpdir(), 'hub-readme-')), readerEnvironment());
  t.teardown(() => shell.close());
  let background = '';

  for (const block of codeBlocks(readFileSync(join(repoRoot, 'README.md'), 'utf8'))) {
    if (block.lang !== 'sh') continue;
    const where = `README.md line ${block.line}`;
    if (block.skip) {
      t.comment(`${where}: not run (${block.skip})`);
      continue;
    }
    const steps = block.background ? [{ script: `${block.background} &\n`, shows: [] }] : shellSteps(block.code);
    for (const step of steps) {
      const run = await shell.run(step.script, 240_000);
      if (block.background) background = run.outputFile;
      if (!t.ok(run.ok, `${where}: ${step.script.trim().split('\n', 1)[0]}`, { output: run.output })) return;
      const missing = missingOutput(step.shows, run.output);
      if (!t.equal(missing, undefined, `${where}: prints what the README shows`, { output: run.output })) return;
    }
    for (const url of block.ready) {
      const up = await waitUntilAnswering(url);
      if (!t.ok(up, `${where}: ${url} answers`, { hubOutput: background ? shell.outputOf(background).slice(-4_000) : '' })) return;
    }
  }
});
