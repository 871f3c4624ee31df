// The package managers pkg.* drives, as the argv each action runs: pure, so every manager's
// commands are tested here without the manager (only apt runs for real on this Debian machine).

export const MANAGERS = ['apt', 'dnf', 'yum', 'apk', 'pacman', 'zypper', 'brew'] as const;
export type Manager = (typeof MANAGERS)[number];

/** The program whose presence on PATH means the manager is there, in the order detection tries. */
export const DETECT_BY: Readonly<Record<Manager, string>> = {
  apt: 'apt-get',
  dnf: 'dnf',
  yum: 'yum',
  apk: 'apk',
  pacman: 'pacman',
  zypper: 'zypper',
  brew: 'brew',
};

/** The first manager whose program `has` finds (apt before dnf before yum...), or null. */
export async function detectManager(has: (program: string) => Promise<boolean>): Promise<Manager | null> {
  for (const manager of MANAGERS) if (await has(DETECT_BY[manager])) return manager;
  return null;
}

export type Action = 'install' | 'remove' | 'upgrade';

/** The command that installs, removes or upgrades `names`, without prompting. */
export function actionCommand(manager: Manager, action: Action, names: readonly string[]): string[] {
  const words: Record<Manager, Record<Action, string[]>> = {
    apt: {
      install: ['apt-get', 'install', '-y', '--no-install-recommends'],
      remove: ['apt-get', 'remove', '-y'],
      upgrade: ['apt-get', 'install', '-y', '--only-upgrade'],
    },
    dnf: { install: ['dnf', 'install', '-y'], remove: ['dnf', 'remove', '-y'], upgrade: ['dnf', 'upgrade', '-y'] },
    yum: { install: ['yum', 'install', '-y'], remove: ['yum', 'remove', '-y'], upgrade: ['yum', 'update', '-y'] },
    apk: { install: ['apk', 'add'], remove: ['apk', 'del'], upgrade: ['apk', 'add', '--upgrade'] },
    pacman: {
      install: ['pacman', '-S', '--noconfirm', '--needed'],
      remove: ['pacman', '-R', '--noconfirm'],
      upgrade: ['pacman', '-S', '--noconfirm'],
    },
    zypper: {
      install: ['zypper', '--non-interactive', 'install'],
      remove: ['zypper', '--non-interactive', 'remove'],
      upgrade: ['zypper', '--non-interactive', 'update'],
    },
    brew: { install: ['brew', 'install'], remove: ['brew', 'uninstall'], upgrade: ['brew', 'upgrade'] },
  };
  // `--` ends options: a name starting with '-' is a name, not a flag.
  return [...words[manager][action], '--', ...names];
}

/** The command that refreshes the manager's index of available packages. */
export function refreshCommand(manager: Manager): string[] {
  return {
    apt: ['apt-get', 'update'],
    dnf: ['dnf', 'makecache'],
    yum: ['yum', 'makecache'],
    apk: ['apk', 'update'],
    pacman: ['pacman', '-Sy'],
    zypper: ['zypper', '--non-interactive', 'refresh'],
    brew: ['brew', 'update'],
  }[manager];
}

/** The command that asks whether `name` is installed, and how to read its answer. */
export function queryCommand(manager: Manager, name: string): string[] {
  switch (manager) {
    case 'apt':
      return ['dpkg-query', '-W', '-f=${Status}\t${Version}', '--', name];
    case 'dnf':
    case 'yum':
    case 'zypper':
      return ['rpm', '-q', '--qf', '%{VERSION}-%{RELEASE}', '--', name];
    case 'apk':
      return ['apk', 'info', '-e', '-v', '--', name];
    case 'pacman':
      return ['pacman', '-Q', '--', name];
    case 'brew':
      return ['brew', 'list', '--versions', '--', name];
  }
}

/** The installed version from a query's exit code and output, or null when not installed. */
export function parseQuery(manager: Manager, name: string, code: number | null, stdout: string): string | null {
  if (code !== 0) return null;
  const out = stdout.trim();
  switch (manager) {
    case 'apt': {
      // "install ok installed\t5.02-1": other states (deinstall, config-files) are not installed.
      const [status, version] = out.split('\t');
      return status === 'install ok installed' ? (version ?? '') : null;
    }
    case 'dnf':
    case 'yum':
    case 'zypper':
      return out.split('\n')[0] || null;
    case 'apk':
      // "curl-8.5.0-r0": the name, then the version.
      return out.startsWith(`${name}-`) ? out.slice(name.length + 1).split('\n')[0] : out ? out : null;
    case 'pacman':
    case 'brew': {
      // "curl 8.5.0-1": the name, then the version(s).
      const [, ...versions] = out.split('\n')[0].split(' ');
      return versions.length > 0 ? versions.join(' ') : null;
    }
  }
}

/** Environment each manager needs to never prompt. */
export function managerEnv(manager: Manager): Record<string, string> {
  if (manager === 'apt') return { DEBIAN_FRONTEND: 'noninteractive' };
  if (manager === 'brew') return { HOMEBREW_NO_AUTO_UPDATE: '1' };
  return {};
}
