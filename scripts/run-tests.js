// Runs the tap suite and ends with one plain summary line ("N passed, N failed").
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const tapBin = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', 'tap', 'dist', 'esm', 'run.mjs');
const child = spawn(process.execPath, [tapBin, ...process.argv.slice(2)], { stdio: ['inherit', 'pipe', 'inherit'] });

let tail = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString('utf8')).slice(-4096);
});
child.on('exit', (code, signal) => {
  const summary = /# \{ (total: \d+[^}]*) \}/.exec(tail);
  if (summary) {
    const counts = Object.fromEntries(summary[1].split(', ').map((pair) => pair.split(': ')));
    const skipped = Number(counts.skip ?? 0) + Number(counts.todo ?? 0);
    console.log(`\n${counts.pass} passed, ${counts.fail ?? 0} failed${skipped ? `, ${skipped} skipped` : ''}`);
  }
  process.exit(code ?? (signal ? 1 : 0));
});
