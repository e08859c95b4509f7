import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { codeBlocks, readerEnvironment, repoRoot, runShellBlock, ShellSession, sandboxCheckout } from '../helpers/doc-blocks.js';

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
  for (const block of codeBlocks(readFileSync(join(repoRoot, 'README.md'), 'utf8'))) {
    if (block.lang !== 'sh') continue;
    const where = `README.md line ${block.line}`;
    if (block.skip) t.comment(`${where}: not run (${block.skip})`);
    else if (!(await runShellBlock(t, shell, block, where))) return;
  }
});
