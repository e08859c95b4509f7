import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIN_DIRS = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin'];

function locate(binary: string): string | undefined {
  return BIN_DIRS.map((dir) => `${dir}/${binary}`).find((path) => existsSync(path));
}

/**
 * Finds `binary`, or installs the Debian package that ships it when running as root with apt.
 * Returns undefined, after logging why, when neither works: the caller decides whether that
 * skips a row or stops the benchmark.
 */
export async function findOrInstall(binary: string, debianPackage: string, log: (line: string) => void): Promise<string | undefined> {
  const found = locate(binary);
  if (found) return found;
  if (process.getuid?.() !== 0) {
    log(`${binary} not found and not root (apt-get install ${debianPackage} provides it)`);
    return undefined;
  }
  log(`${binary} not found: installing ${debianPackage} with apt-get…`);
  const install = () => run('apt-get', ['install', '-y', '--no-install-recommends', debianPackage], { timeout: 300_000 });
  try {
    await install().catch(async () => {
      await run('apt-get', ['update'], { timeout: 300_000 });
      await install();
    });
  } catch (err) {
    log(`could not install ${debianPackage}: ${(err as Error).message.split('\n')[0]}`);
    return undefined;
  }
  return locate(binary);
}
