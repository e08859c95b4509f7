import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type tap from 'tap';

/**
 * The code blocks of a Markdown document, run as a reader would run them. A block may be preceded
 * by an HTML comment the reader does not see, saying how the test runs it:
 *
 *   <!-- test: skip (why) -->
 *   <!-- test: background: <command>; ready: <url> <url> (why) -->   runs <command> in the background
 *                                                                      instead of the block
 *   <!-- test: ready: <url> -->                                       runs the block, then waits for <url>
 *
 * In a shell block, full-line `# ` comments right after a command are the output it shows: each
 * such line (`#  ` with more spaces continues the line before) must appear, in order, in what the
 * commands since the previous shown output printed, `…` standing for anything.
 */

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export type CodeBlock = { lang: string; code: string; line: number; skip?: string; background?: string; ready: string[] };

export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    const comment = /^<!-- test: (.*) -->$/.exec(lines[start - 1] ?? '');
    blocks.push({ lang: fence[1]!, code: `${body.join('\n')}\n`, line: start + 1, ...parseDirective(comment?.[1]) });
  }
  return blocks;
}

function parseDirective(text: string | undefined): Pick<CodeBlock, 'skip' | 'background' | 'ready'> {
  if (text === undefined) return { ready: [] };
  const why = /\s*\(([^()]*)\)\s*$/.exec(text);
  const rules = (why ? text.slice(0, why.index) : text).split(';').map((part) => part.trim());
  const out: Pick<CodeBlock, 'skip' | 'background' | 'ready'> = { ready: [] };
  for (const rule of rules) {
    if (rule === 'skip') out.skip = why?.[1] ?? 'no reason given';
    else if (rule.startsWith('background:')) out.background = rule.slice('background:'.length).trim();
    else if (rule.startsWith('ready:')) out.ready = rule.slice('ready:'.length).trim().split(/\s+/);
    else throw new Error(`unknown test directive "${rule}"`);
  }
  return out;
}

/** A shell block cut where it shows output: each step's commands and the output lines they show. */
export type ShellStep = { script: string; shows: string[] };

export function shellSteps(code: string): ShellStep[] {
  const steps: ShellStep[] = [];
  let script: string[] = [];
  let shows: string[] = [];
  const flush = () => {
    if (script.some((l) => l.trim()) || shows.length) steps.push({ script: `${script.join('\n')}\n`, shows });
    script = [];
    shows = [];
  };
  for (const line of code.split('\n')) {
    const shown = /^# (.*)$/.exec(line);
    if (shown) {
      if (/^\s/.test(shown[1]!) && shows.length) shows[shows.length - 1] += shown[1]!.trim();
      else shows.push(shown[1]!);
      continue;
    }
    if (shows.length) flush();
    script.push(line);
  }
  flush();
  return steps;
}

/** Whether `output` holds every shown line, in order (`…` matches anything). */
export function missingOutput(shows: string[], output: string): string | undefined {
  const lines = output.split('\n').map((l) => l.replace(/\s+$/, ''));
  let at = 0;
  for (const shown of shows) {
    const pattern = new RegExp(`^${shown.split('…').map(escapeRegExp).join('.*?')}$`);
    const found = lines.findIndex((line, i) => i >= at && pattern.test(line));
    if (found < 0) return shown;
    at = found + 1;
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A checkout as a reader has it, without touching this one: a fresh folder whose entries link to
 * this repository's (installed dependencies included), with no `data/` of its own yet.
 */
export function sandboxCheckout(t: { teardown: (fn: () => unknown) => void }): { root: string; checkout: string } {
  const root = mkdtempSync(join(tmpdir(), 'hub-docs-'));
  const checkout = join(root, 'hub');
  mkdirSync(checkout);
  for (const entry of readdirSync(repoRoot)) {
    if (['data', '.git', '.tap'].includes(entry) || entry.endsWith('.tgz')) continue;
    symlinkSync(join(repoRoot, entry), join(checkout, entry));
  }
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  return { root, checkout };
}

/**
 * One bash, as a reader's terminal: variables and background jobs carry from step to step, and a
 * failing command (`set -e`) ends it. Each step's output, and its background jobs', goes to a
 * file of its own. `close` stops the shell and everything it started.
 */
export class ShellSession {
  private readonly shell: ChildProcess;
  private marks = '';
  private steps = 0;
  private exited = false;

  constructor(
    cwd: string,
    private readonly scratch: string,
    env: Record<string, string | undefined>,
  ) {
    this.shell = spawn('bash', ['--noprofile', '--norc'], { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'inherit'] });
    this.shell.stdout!.setEncoding('utf8').on('data', (d: string) => (this.marks += d));
    this.shell.on('exit', () => (this.exited = true));
    this.shell.stdin!.write('set -e\n');
  }

  /** Runs a script in the shell; resolves with its output once it has finished, or the shell has ended. */
  async run(script: string, timeoutMs = 120_000): Promise<{ ok: boolean; output: string; outputFile: string }> {
    const n = ++this.steps;
    const file = join(this.scratch, `step-${n}.sh`);
    const outputFile = join(this.scratch, `step-${n}.out`);
    writeFileSync(file, script);
    const mark = `__step_${n}_done__`;
    this.shell.stdin!.write(`source ${file} < /dev/null > ${outputFile} 2>&1; echo ${mark}\n`);
    const deadline = Date.now() + timeoutMs;
    while (!this.marks.includes(mark) && !this.exited && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return { ok: this.marks.includes(mark), output: readFileSync(outputFile, 'utf8'), outputFile };
  }

  /** Reads what a step (and the background jobs it started) has written so far. */
  outputOf(outputFile: string): string {
    return readFileSync(outputFile, 'utf8');
  }

  async close(): Promise<void> {
    const group = -this.shell.pid!;
    const signal = (s: NodeJS.Signals) => {
      try {
        process.kill(group, s);
      } catch {
        // already gone
      }
    };
    signal('SIGTERM');
    // The group is gone once nothing in it answers signal 0.
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      try {
        process.kill(group, 0);
      } catch {
        return;
      }
    }
    signal('SIGKILL');
  }
}

type Asserts = Pick<typeof tap, 'ok' | 'equal'>;

/**
 * Runs one shell block in `shell` as its directive says, asserting that each step finishes, shows
 * what the block shows, and that the servers it names come up. False once something failed (the
 * blocks after it would only fail for that reason).
 */
export async function runShellBlock(t: Asserts, shell: ShellSession, block: CodeBlock, where: string): Promise<boolean> {
  const steps = block.background ? [{ script: `${block.background} &\n`, shows: [] }] : shellSteps(block.code);
  let lastOutput = '';
  for (const step of steps) {
    const run = await shell.run(step.script, 300_000);
    lastOutput = run.outputFile;
    if (!t.ok(run.ok, `${where}: ${step.script.trim().split('\n', 1)[0]}`, { output: run.output })) return false;
    if (!t.equal(missingOutput(step.shows, run.output), undefined, `${where}: prints what it shows`, { output: run.output })) return false;
  }
  for (const url of block.ready) {
    const up = await waitUntilAnswering(url);
    if (!t.ok(up, `${where}: ${url} answers`, { output: shell.outputOf(lastOutput).slice(-4_000) })) return false;
  }
  return true;
}

/** Polls `url` until it answers with any status below 500 (a server that is up and ready). */
export async function waitUntilAnswering(url: string, timeoutMs = 180_000): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    const status = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.status,
      () => 0,
    );
    if (status > 0 && status < 500) return true;
  }
  return false;
}

/** The environment of a fresh terminal: none of the variables a test run or hub itself set. */
export function readerEnvironment(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(HUB_|DATABASE_URL$|TAP|NODE_ENV$|npm_)/.test(name)));
}
