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
  const summary = /# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?/.exec(tail);
  if (summary) {
    const [, total, pass, fail] = summary;
    const failed = Number(fail ?? Number(total) - Number(pass));
    console.log(`\n${pass} passed, ${failed} failed`);
  }
  process.exit(code ?? (signal ? 1 : 0));
});
