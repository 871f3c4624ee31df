// Real repositories in a temp directory: an origin, a clone of it, commits that move HEAD.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { createGitModule } from './git.js';

const git = createGitModule();
const root = mkdtempSync(join(tmpdir(), 'git-test-'));
const origin = join(root, 'origin');
const sh = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example', ...args], { cwd, encoding: 'utf8' }).trim();

function commit(message: string): string {
  writeFileSync(join(origin, 'file.txt'), message);
  sh(origin, 'add', '.');
  sh(origin, 'commit', '-q', '-m', message);
  return sh(origin, 'rev-parse', 'HEAD');
}

describe('git on real repositories', () => {
  it('clones once, pulls and checks out with changed when HEAD moves, tags, reports status', async () => {
    execFileSync('git', ['init', '-q', '-b', 'main', origin]);
    const first = commit('one');
    const dest = join(root, 'clone');
    const call = () => luaCallContext().call;

    expect(await git.clone(luaCallContext({ dryRun: true }).call, origin, dest)).toMatchObject({
      changed: true,
      skipped: true,
    });
    expect(await git.clone(call(), origin, dest)).toEqual({ changed: true, head: first });
    expect(await git.clone(call(), origin, dest)).toEqual({ changed: false, head: first });

    expect(await git.pull(call(), dest)).toEqual({ changed: false, head: first });
    const second = commit('two');
    // Dry-run asks the remote and fetches nothing.
    expect(await git.pull(luaCallContext({ dryRun: true }).call, dest)).toMatchObject({ changed: true, head: first });
    expect(await git.pull(call(), dest)).toEqual({ changed: true, head: second, previous: first });

    expect(await git.checkout(call(), dest, first)).toEqual({ changed: true, head: first, previous: second });
    expect(await git.checkout(call(), dest, first)).toEqual({ changed: false, head: first });
    expect(await git.checkout(call(), dest, 'main')).toMatchObject({ changed: true, head: second });

    expect(await git.tag(call(), dest, 'v1', { message: 'release' })).toEqual({
      changed: true,
      tag: 'v1',
      commit: second,
    });
    expect(await git.tag(call(), dest, 'v1')).toEqual({ changed: false, tag: 'v1', commit: second });
    expect(sh(dest, 'cat-file', '-t', 'v1')).toBe('tag');

    expect(await git.status(call(), dest)).toEqual({ head: second, branch: 'main', dirty: false, changes: [] });
    writeFileSync(join(dest, 'new.txt'), 'x');
    expect(await git.status(call(), dest)).toMatchObject({ dirty: true, changes: ['?? new.txt'] });
    await expect(git.checkout(call(), dest, 'nope')).rejects.toThrow('git.checkout: git -C');
  });
});
