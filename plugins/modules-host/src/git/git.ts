import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { LuaCallContext, LuaModuleImplementation, LuaValue } from '@runner/plugin-sdk';
import { change, options, optString, requireString } from '../host/args.js';
import { mustRun, runCommand } from '../host/command.js';
import type { gitModule } from './spec.js';

type Fn = keyof typeof gitModule.functions;

const GIT_ENV = { GIT_TERMINAL_PROMPT: '0' };

function git(fn: string, dir: string, args: string[], signal: AbortSignal): Promise<string> {
  return mustRun(`git.${fn}`, ['git', '-C', dir, ...args], { signal, env: GIT_ENV }).then((out) => out.trim());
}

async function head(dir: string, signal: AbortSignal): Promise<string | null> {
  const r = await runCommand(['git', '-C', dir, 'rev-parse', '--verify', '--quiet', 'HEAD'], { signal, env: GIT_ENV });
  return r.code === 0 ? r.stdout.trim() : null;
}

function isRepository(dir: string): boolean {
  return existsSync(join(dir, '.git')) || existsSync(join(dir, 'HEAD'));
}

/** HEAD before and after `act`: changed when it moved. */
async function moving(
  call: LuaCallContext,
  dir: string,
  target: string | null,
  what: string,
  act: () => Promise<void>,
) {
  const before = await head(dir, call.signal);
  if (call.dryRun) return change(call, target !== before, what, async () => {}, { head: before });
  await act();
  const after = await head(dir, call.signal);
  if (after === before) return { changed: false, head: after };
  call.logger.info(`${what}: HEAD ${before?.slice(0, 12) ?? 'none'} -> ${after?.slice(0, 12)}`);
  return { changed: true, head: after, previous: before };
}

async function clone(call: LuaCallContext, urlArg: LuaValue, dirArg: LuaValue, optsArg: LuaValue) {
  const url = requireString('git.clone', urlArg, 1, 'a repository URL');
  const dir = requireString('git.clone', dirArg, 2, 'a directory');
  const o = options('git.clone', optsArg, 3, ['branch', 'depth'] as const);
  const branch = optString('git.clone', 'branch', o.branch);
  if (o.depth !== undefined && (typeof o.depth !== 'number' || !Number.isInteger(o.depth) || o.depth < 1))
    throw new Error('git.clone: depth must be a positive integer');
  if (isRepository(dir)) return change(call, false, '', async () => {}, { head: await head(dir, call.signal) });
  const argv = [
    'git',
    'clone',
    ...(branch ? ['--branch', branch] : []),
    ...(o.depth ? ['--depth', String(o.depth)] : []),
    '--',
    url,
    dir,
  ];
  return change(call, true, `clone ${url} into ${dir}`, async () => {
    await mustRun('git.clone', argv, { signal: call.signal, env: GIT_ENV });
    return { head: await head(dir, call.signal) };
  });
}

async function pull(call: LuaCallContext, dirArg: LuaValue, optsArg: LuaValue) {
  const dir = requireString('git.pull', dirArg, 1, 'a directory');
  const o = options('git.pull', optsArg, 2, ['remote', 'branch'] as const);
  const remote = optString('git.pull', 'remote', o.remote) ?? 'origin';
  const branch =
    optString('git.pull', 'branch', o.branch) ??
    (await git('pull', dir, ['rev-parse', '--abbrev-ref', 'HEAD'], call.signal));
  let target: string | null = null;
  if (call.dryRun) {
    const line = await git('pull', dir, ['ls-remote', remote, `refs/heads/${branch}`], call.signal);
    target = line.split(/\s/)[0] || null;
  }
  return moving(call, dir, target, `pull ${remote} ${branch} into ${dir}`, async () => {
    await git('pull', dir, ['pull', '--ff-only', remote, branch], call.signal);
  });
}

async function checkout(call: LuaCallContext, dirArg: LuaValue, refArg: LuaValue) {
  const dir = requireString('git.checkout', dirArg, 1, 'a directory');
  const ref = requireString('git.checkout', refArg, 2, 'a branch, tag or commit');
  if (ref.startsWith('-')) throw new Error('git.checkout: a ref does not start with "-"');
  const target = await git('checkout', dir, ['rev-parse', '--verify', `${ref}^{commit}`], call.signal);
  return moving(call, dir, target, `check out ${ref} in ${dir}`, async () => {
    await git('checkout', dir, ['checkout', '--quiet', ref], call.signal);
  });
}

export function createGitModule(): LuaModuleImplementation<Fn> {
  return {
    clone,
    pull,
    checkout,
    async tag(call, dirArg, nameArg, optsArg) {
      const dir = requireString('git.tag', dirArg, 1, 'a directory');
      const name = requireString('git.tag', nameArg, 2, 'a tag name');
      const o = options('git.tag', optsArg, 3, ['ref', 'message'] as const);
      const ref = optString('git.tag', 'ref', o.ref) ?? 'HEAD';
      const message = optString('git.tag', 'message', o.message);
      const commit = await git('tag', dir, ['rev-parse', '--verify', `${ref}^{commit}`], call.signal);
      const exists =
        (
          await runCommand(['git', '-C', dir, 'rev-parse', '--verify', '--quiet', `refs/tags/${name}`], {
            signal: call.signal,
          })
        ).code === 0;
      return change(
        call,
        !exists,
        `tag ${commit.slice(0, 12)} as ${name} in ${dir}`,
        async () => {
          await git('tag', dir, ['tag', ...(message ? ['-a', '-m', message] : []), '--', name, commit], call.signal);
        },
        { tag: name, commit },
      );
    },
    async status(call, dirArg) {
      const dir = requireString('git.status', dirArg, 1, 'a directory');
      const porcelain = await git('status', dir, ['status', '--porcelain=v1', '--branch'], call.signal);
      const [branchLine, ...changes] = porcelain.split('\n').filter((l) => l !== '');
      const branch = /^## (?:No commits yet on )?([^.\s]+)/.exec(branchLine ?? '')?.[1];
      return {
        head: await head(dir, call.signal),
        branch: branch === 'HEAD' ? undefined : branch,
        dirty: changes.length > 0,
        changes,
      };
    },
  };
}
