import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  type CodeBlock,
  codeBlocks,
  readerEnvironment,
  repoRoot,
  runShellBlock,
  ShellSession,
  sandboxCheckout,
} from '../helpers/doc-blocks.js';
import { freePort } from '../helpers/processes.js';

// The README, top to bottom, as a new user runs it: in a checkout of its own (linked to this one's
// installed dependencies), one terminal. Every shell block runs as written unless a comment before
// it says why not; every output it shows must appear. It runs on ports of its own, exported as a
// reader who already runs a hub would, so the commands must read them; the outputs, which show the
// default ports, are read with this run's.

const DEFAULT_PORTS: Record<string, number> = { HUB_CONTROL_PLANE_PORT: 8400, HUB_PROXY_PORT: 8402, SELLER_PORT: 8500 };

/** The block with the default ports in what it shows and waits for replaced by `ports`; its commands as written. */
function onPorts(block: CodeBlock, ports: Record<string, number>): CodeBlock {
  const swap = (text: string) =>
    Object.entries(DEFAULT_PORTS).reduce((out, [name, port]) => out.replace(new RegExp(`:${port}\\b`, 'g'), `:${ports[name]}`), text);
  const code = block.code
    .split('\n')
    .map((line) => (line.startsWith('# ') ? swap(line) : line))
    .join('\n');
  return { ...block, code, ready: block.ready.map(swap) };
}

t.test('every shell block in README.md runs as written, top to bottom, on ports of its own', async (t) => {
  const ports: Record<string, number> = {};
  for (const name of Object.keys(DEFAULT_PORTS)) ports[name] = await freePort();
  const { checkout } = sandboxCheckout(t);
  const env = { ...readerEnvironment(), ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])) };
  const shell = new ShellSession(checkout, mkdtempSync(join(tmpdir(), 'hub-readme-')), env);
  t.teardown(() => shell.close());
  for (const block of codeBlocks(readFileSync(join(repoRoot, 'README.md'), 'utf8'))) {
    if (block.lang !== 'sh') continue;
    const where = `README.md line ${block.line}`;
    if (block.skip) t.comment(`${where}: not run (${block.skip})`);
    else if (!(await runShellBlock(t, shell, onPorts(block, ports), where))) return;
  }
});
