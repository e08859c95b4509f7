import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';

/**
 * Compiles the Solidity sources under `contracts/` with the solc that npm ships (a wasm build, so
 * it works offline) against OpenZeppelin from node_modules. Artifacts are build output: they are
 * cached by a hash of compiler, settings and every source, never committed.
 */

export type ContractArtifact = { contractName: string; abi: Abi; bytecode: Hex };

const require = createRequire(import.meta.url);
const CONTRACTS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'contracts');
const OPENZEPPELIN = '@openzeppelin/contracts/';
const OPENZEPPELIN_DIR = dirname(require.resolve(`${OPENZEPPELIN}package.json`));

// Pinned so a cached artifact never depends on the compiler's default target; anvil runs newer forks.
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
} as const;

type SolcOutput = {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
};

type CompileOptions = {
  cacheDir?: string;
  /** Where the sources are: hub's `contracts/` unless said (the tests' own contracts are elsewhere). */
  sourcesDir?: string;
};

/** The artifact of `contractName`, declared in `contracts/<contractName>.sol`. */
export async function compileContract(contractName: string, options: CompileOptions = {}): Promise<ContractArtifact> {
  return (await compileContracts([contractName], options))[0]!;
}

/** The artifacts of several contracts, from one compiler run (every source is compiled each run). */
export async function compileContracts(contractNames: string[], options: CompileOptions = {}): Promise<ContractArtifact[]> {
  const sources = await readSources(options.sourcesDir ?? CONTRACTS_DIR);
  const solcVersion = (require('solc/package.json') as { version: string }).version;
  const key = createHash('sha256').update(JSON.stringify({ solcVersion, SETTINGS, sources })).digest('hex').slice(0, 16);
  const cacheFile = (name: string) => (options.cacheDir ? join(options.cacheDir, `${name}-${key}.json`) : undefined);

  const cached = await Promise.all(contractNames.map((name) => readCached(cacheFile(name))));
  if (cached.every((artifact) => artifact !== undefined)) return cached;

  const output = await runSolc(sources);
  const artifacts = contractNames.map((name) => pick(output, name));
  for (const artifact of artifacts) {
    const file = cacheFile(artifact.contractName);
    if (!file) continue;
    // Write then rename, so a concurrent reader never sees half a file.
    await mkdir(dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    await writeFile(partial, JSON.stringify(artifact));
    await rename(partial, file);
  }
  return artifacts;
}

async function readCached(file: string | undefined): Promise<ContractArtifact | undefined> {
  if (!file) return undefined;
  return readFile(file, 'utf8').then(
    (text) => JSON.parse(text) as ContractArtifact,
    () => undefined,
  );
}

/** Every `.sol` file of `dir`, each named `contracts/<file>` for the compiler whatever the folder. */
async function readSources(dir: string): Promise<Record<string, { content: string }>> {
  const files = (await readdir(dir)).filter((name) => name.endsWith('.sol')).sort();
  const entries = await Promise.all(
    files.map(async (name) => [`contracts/${name}`, { content: await readFile(join(dir, name), 'utf8') }] as const),
  );
  return Object.fromEntries(entries);
}

async function runSolc(sources: Record<string, { content: string }>): Promise<SolcOutput> {
  // Loading the compiler costs about half a second, so only a cache miss pays it.
  const solc = require('solc') as {
    compile(input: string, callbacks: { import: (path: string) => { contents: string } | { error: string } }): string;
  };
  const input = JSON.stringify({ language: 'Solidity', sources, settings: SETTINGS });
  return JSON.parse(solc.compile(input, { import: readImport })) as SolcOutput;
}

/** solc asks for every import it cannot find among the given sources; only OpenZeppelin is allowed. */
function readImport(path: string): { contents: string } | { error: string } {
  if (!path.startsWith(OPENZEPPELIN) || path.includes('..')) return { error: `import not allowed: ${path}` };
  try {
    return { contents: readFileSync(join(OPENZEPPELIN_DIR, path.slice(OPENZEPPELIN.length)), 'utf8') };
  } catch {
    return { error: `not found: ${path}` };
  }
}

function pick(output: SolcOutput, contractName: string): ContractArtifact {
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const compiled = output.contracts?.[`contracts/${contractName}.sol`]?.[contractName];
  if (!compiled) throw new Error(`solc produced no contract ${contractName}`);
  return { contractName, abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}` };
}
