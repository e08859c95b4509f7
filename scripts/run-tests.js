// Runs the tap suite, lists the ten slowest test files of this run (so a test that grew slow shows
// up where everyone looks), and ends with one plain summary line ("N passed, N failed").
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tapBin = join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs');
// tap writes each file's output here and never clears it: only files written by this run count.
const resultsDir = join(root, '.tap', 'test-results');
const startedAt = Date.now();
const child = spawn(process.execPath, [tapBin, ...process.argv.slice(2)], { stdio: ['inherit', 'pipe', 'inherit'] });

let tail = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString('utf8')).slice(-4096);
});
child.on('exit', (code, signal) => {
  const slowest = fileTimes()
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 10);
  if (slowest.length) {
    console.log('\nTen slowest test files:');
    for (const { file, ms } of slowest) console.log(`${(ms / 1000).toFixed(1).padStart(7)} s  ${file}`);
  }
  const summary = /# \{ (total: \d+[^}]*) \}/.exec(tail);
  if (summary) {
    const counts = Object.fromEntries(summary[1].split(', ').map((pair) => pair.split(': ')));
    const skipped = Number(counts.skip ?? 0) + Number(counts.todo ?? 0);
    console.log(`\n${counts.pass} passed, ${counts.fail ?? 0} failed${skipped ? `, ${skipped} skipped` : ''}`);
  }
  process.exit(code ?? (signal ? 1 : 0));
});

/**
 * Each test file this run wrote results for, with the time tap measured inside it (its last
 * top-level `# time=`): from the test framework's start to its end, so without the process's
 * start-up and module loading, which are about the same for every file.
 */
function fileTimes() {
  const times = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.tap') && statSync(path).mtimeMs >= startedAt) {
        const all = [...readFileSync(path, 'utf8').matchAll(/^# time=([\d.]+)ms$/gm)];
        const ms = Number(all.at(-1)?.[1]);
        if (Number.isFinite(ms)) times.push({ file: relative(resultsDir, path).replace(/\.tap$/, ''), ms });
      }
    }
  };
  walk(resultsDir);
  return times;
}
