/**
 * Where a piscina worker module is and how its thread must start, for modules that run as
 * TypeScript through tsx (a clone runs without a build step) or as built JavaScript.
 */

/** The worker module `name` beside the module at `besideUrl` (its `import.meta.url`), in the same form. */
export function workerModule(besideUrl: string, name: string): URL {
  const extension = /\.[cm]?[jt]s$/.exec(new URL(besideUrl).pathname)?.[0] ?? '.js';
  return new URL(`./${name}${extension}`, besideUrl);
}

/**
 * Workers inherit the command line's `--import tsx` but not a loader registered from code, as
 * `bin/hub.js` registers it; a worker that must load TypeScript then gets tsx passed explicitly.
 */
export function workerExecArgv(): string[] {
  const inherited = process.execArgv;
  if (!import.meta.url.endsWith('.ts') || inherited.some((arg) => arg.includes('tsx'))) return inherited;
  return [...inherited, '--import', import.meta.resolve('tsx')];
}
