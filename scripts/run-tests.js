// The whole test suite, as `npm test` and CI run it: the TypeScript tree compiled once
// (compile-for-tests.js), then each test file in a plain Node process, `jobs` at a time, with the
// settings package.json's "tap" section gives `npx tap` (jobs, timeout, test-env, include, exclude). A test
// file is a tap script; this runner stands in for tap's so no loader hook sits in the processes
// (D-210). It lists failures with their diagnostics, the ten slowest files, and ends with one
// plain summary line ("N passed, N failed").
//
//   node scripts/run-tests.js [file or folder ...]   (default: every test/**/*.test.ts but the
//                                                      folders "exclude" names, such as the slow
//                                                      fault suite: `npm run test:faults`)
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { Parser } from 'tap-parser';
import { compiledHubBin, compiledRoot, compileForTests, repoRoot } from './compile-for-tests.js';

const settings = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).tap;
const jobs = Number(process.env.HUB_TEST_JOBS ?? settings.jobs);
const timeoutSeconds = Number(settings.timeout);
const resultsDir = join(repoRoot, '.tap', 'test-results');

/** The folders of the "exclude" patterns (`folder/**`): left out when no file or folder is named. */
const excludedFolders = (settings.exclude ?? []).map((pattern) => {
  if (!pattern.endsWith('/**')) throw new Error(`run-tests.js reads only "folder/**" exclude patterns, not ${pattern}`);
  return pattern.slice(0, -2);
});

/** Test files under each argument (a file or a folder), or under test/ but the excluded folders when there is none. */
function testFiles(args) {
  if (!args.length) return testFiles(['test']).filter((file) => !excludedFolders.some((folder) => file.startsWith(folder)));
  const found = [];
  const walk = (path) => {
    if (statSync(path).isDirectory()) {
      for (const entry of readdirSync(path).sort()) walk(join(path, entry));
    } else if (path.endsWith('.test.ts')) found.push(relative(repoRoot, path));
  };
  for (const arg of args) walk(resolve(repoRoot, arg));
  return found;
}

/**
 * Counts a file's assertions as tap does: each test point that is not a subtest's own summary.
 * A subtest's summary is the point its parent emits right after the subtest ends.
 */
function countAssertions(parser, path, tally) {
  // Set when a subtest ends: whether a failure inside it was counted already.
  let endedSubtest = null;
  parser.on('child', (child) => {
    const failedBefore = tally.failed;
    countAssertions(child, [...path, child.name], tally);
    child.on('complete', () => (endedSubtest = { failedInside: tally.failed > failedBefore }));
  });
  parser.on('assert', (point) => {
    const subtest = endedSubtest;
    endedSubtest = null;
    if (point.todo || point.skip) tally.skipped++;
    else if (subtest && (point.ok || subtest.failedInside)) return;
    else if (point.ok) tally.passed++;
    else {
      tally.failed++;
      tally.failures.push({ path: [...path, point.name], diag: point.diag });
    }
  });
}

function runFile(file) {
  return new Promise((done) => {
    const startedAt = Date.now();
    const compiled = join(compiledRoot, file.replace(/\.ts$/, '.js'));
    const env = {
      ...process.env,
      ...Object.fromEntries(settings['test-env'].map((pair) => pair.split('='))),
      TAP: '1',
      TAP_TIMEOUT: String(timeoutSeconds),
      HUB_TEST_HUB_BIN: compiledHubBin,
    };
    const child = spawn(process.execPath, ['--enable-source-maps', compiled], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tally = { passed: 0, failed: 0, skipped: 0, failures: [] };
    const parser = new Parser();
    countAssertions(parser, [], tally);
    let output = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      output += chunk;
      parser.write(chunk);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    // tap ends a test at TAP_TIMEOUT itself; this is for a process that no longer answers at all.
    const killer = setTimeout(() => child.kill('SIGKILL'), (timeoutSeconds + 60) * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      parser.end();
      const ms = Date.now() - startedAt;
      const results = join(resultsDir, `${file}.tap`);
      mkdirSync(dirname(results), { recursive: true });
      writeFileSync(results, `${output}${stderr ? `\n# stderr:\n${stderr.replace(/^/gm, '# ')}` : ''}\n# time=${ms}ms\n`);
      const crashed = code !== 0 && tally.failed === 0;
      if (crashed) {
        tally.failed++;
        tally.failures.push({ path: [`exited ${code ?? signal}`], diag: { stderr: stderr.slice(-4000) } });
      }
      done({ file, ms, ...tally });
    });
  });
}

function report(result) {
  const { file, ms, passed, failed, failures } = result;
  const mark = failed ? 'FAIL' : 'ok  ';
  console.log(`${mark} ${file}  ${passed} passed${failed ? `, ${failed} failed` : ''}  ${(ms / 1000).toFixed(1)} s`);
  for (const failure of failures) {
    console.log(`  not ok: ${failure.path.join(' › ')}`);
    if (failure.diag) console.log(JSON.stringify(failure.diag, null, 2).replace(/^/gm, '    '));
  }
}

const files = testFiles(process.argv.slice(2));
const compiledAt = Date.now();
const compiledCount = await compileForTests();
console.log(
  `compiled ${compiledCount} TypeScript files in ${((Date.now() - compiledAt) / 1000).toFixed(1)} s; ${files.length} test files, ${jobs} at a time`,
);

const queue = [...files];
const results = [];
await Promise.all(
  Array.from({ length: Math.min(jobs, queue.length) }, async () => {
    for (let file = queue.shift(); file; file = queue.shift()) {
      const result = await runFile(file);
      results.push(result);
      report(result);
    }
  }),
);

const failedFiles = results.filter((r) => r.failed);
if (failedFiles.length) {
  console.log('\nFailed:');
  for (const result of failedFiles) report(result);
}
console.log('\nTen slowest test files:');
for (const { file, ms } of [...results].sort((a, b) => b.ms - a.ms).slice(0, 10)) {
  console.log(`${(ms / 1000).toFixed(1).padStart(7)} s  ${file}`);
}
const sum = (key) => results.reduce((total, r) => total + r[key], 0);
const skipped = sum('skipped');
console.log(`\n${sum('passed')} passed, ${sum('failed')} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failedFiles.length ? 1 : 0);
