import { execFileSync } from 'node:child_process';

const reported = new Set<string>();

/**
 * Whether `command` is on the PATH. When it is not, prints one line naming the Debian package that
 * provides it, once per package, so a fresh machine's `npm test` says what it skipped and why
 * (`.ci/run` installs every package, so CI skips nothing).
 */
export function hasTool(command: string, debianPackage: string): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v "$1"', 'sh', command], { stdio: 'ignore' });
    return true;
  } catch {
    if (!reported.has(debianPackage)) {
      reported.add(debianPackage);
      process.stderr.write(`skipping tests that need ${command}: apt-get install -y ${debianPackage}\n`);
    }
    return false;
  }
}

/** True when the tests run as root (tests that create users or network namespaces need it). */
export function isRoot(): boolean {
  if (process.getuid?.() === 0) return true;
  if (!reported.has('root')) {
    reported.add('root');
    process.stderr.write('skipping tests that need root (they create a throwaway user)\n');
  }
  return false;
}
