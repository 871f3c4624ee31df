// apt runs for real here (Debian, root): queries, and dry-run installs that must change nothing.
// The real install and removal are the held-out workflow's (host-workflow.test.ts: one install of
// `sl`, then pkg.remove in its clean-up), to keep apt's time to one round. dnf, yum, apk, pacman,
// zypper and brew are not on this machine: their commands and the parsing of their answers are
// checked as the argv pkg builds (managers.ts is pure), with no fake binaries.
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { actionCommand, detectManager, parseQuery, queryCommand, refreshCommand } from './managers.js';
import { createPkgModule } from './pkg.js';

const pkg = createPkgModule();

describe('pkg with apt, for real', () => {
  it('queries an installed package with its version, and one that is not', async () => {
    const { call } = luaCallContext();
    const git = (await pkg.query(call, 'git')) as Record<string, unknown>;
    expect(git).toMatchObject({ installed: true, manager: 'apt' });
    expect(git.version).toMatch(/^\d/);
    expect(await pkg.query(call, 'cowsay')).toEqual({ installed: false, manager: 'apt' });
  });

  it('in dry-run says what it would install and installs nothing; an installed package is no change', async () => {
    const { call } = luaCallContext({ dryRun: true });
    expect(await pkg.install(call, ['git', 'cowsay'])).toMatchObject({
      changed: true,
      would_change: true,
      installed: ['cowsay'],
      note: 'dry-run: would install cowsay (apt)',
    });
    expect(await pkg.query(call, 'cowsay')).toMatchObject({ installed: false });
    expect(await pkg.install(luaCallContext().call, 'git')).toEqual({ changed: false, manager: 'apt', installed: [] });
    expect(await pkg.remove(luaCallContext().call, 'cowsay')).toEqual({ changed: false, manager: 'apt', removed: [] });
  });

  it('refuses an unknown manager and bad names', async () => {
    const { call } = luaCallContext();
    await expect(pkg.install(call, 'x', { manager: 'npm' })).rejects.toThrow('pkg.install: unknown manager "npm"');
    await expect(pkg.install(call, [])).rejects.toThrow('argument 1 must be a string or a non-empty list');
  });
});

describe('the commands of every manager', () => {
  it('detects the first manager present, in order', async () => {
    const present = new Set(['zypper', 'brew']);
    expect(await detectManager(async (p) => present.has(p))).toBe('zypper');
    expect(await detectManager(async () => false)).toBeNull();
  });

  it('installs, removes and upgrades without prompting, names after --', () => {
    expect(actionCommand('apt', 'install', ['nginx'])).toEqual([
      'apt-get',
      'install',
      '-y',
      '--no-install-recommends',
      '--',
      'nginx',
    ]);
    expect(actionCommand('dnf', 'remove', ['a', 'b'])).toEqual(['dnf', 'remove', '-y', '--', 'a', 'b']);
    expect(actionCommand('yum', 'upgrade', ['a'])).toEqual(['yum', 'update', '-y', '--', 'a']);
    expect(actionCommand('apk', 'install', ['a'])).toEqual(['apk', 'add', '--', 'a']);
    expect(actionCommand('pacman', 'install', ['a'])).toEqual(['pacman', '-S', '--noconfirm', '--needed', '--', 'a']);
    expect(actionCommand('zypper', 'remove', ['a'])).toEqual(['zypper', '--non-interactive', 'remove', '--', 'a']);
    expect(actionCommand('brew', 'upgrade', ['a'])).toEqual(['brew', 'upgrade', '--', 'a']);
    expect(refreshCommand('dnf')).toEqual(['dnf', 'makecache']);
    expect(refreshCommand('pacman')).toEqual(['pacman', '-Sy']);
  });

  it('reads each manager\'s answer to "is it installed"', () => {
    expect(queryCommand('zypper', 'curl')).toEqual(['rpm', '-q', '--qf', '%{VERSION}-%{RELEASE}', '--', 'curl']);
    expect(parseQuery('apt', 'sl', 0, 'install ok installed\t5.02-1')).toBe('5.02-1');
    expect(parseQuery('apt', 'sl', 0, 'deinstall ok config-files\t5.02-1')).toBeNull();
    expect(parseQuery('dnf', 'curl', 0, '8.5.0-1.fc40')).toBe('8.5.0-1.fc40');
    expect(parseQuery('dnf', 'curl', 1, 'package curl is not installed')).toBeNull();
    expect(parseQuery('apk', 'curl', 0, 'curl-8.5.0-r0\n')).toBe('8.5.0-r0');
    expect(parseQuery('pacman', 'curl', 0, 'curl 8.5.0-1\n')).toBe('8.5.0-1');
    expect(parseQuery('brew', 'jq', 0, 'jq 1.7.1 1.6\n')).toBe('1.7.1 1.6');
    expect(parseQuery('brew', 'jq', 1, '')).toBeNull();
  });
});
