import { chmod, chown, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LuaCallContext, LuaModuleImplementation, LuaValue } from '@runner/plugin-sdk';
import { change, options, optBoolean, optString, requireString, type Change } from '../host/args.js';
import { mustRun, runCommand } from '../host/command.js';
import type { userModule } from './spec.js';

type Fn = keyof typeof userModule.functions;

export interface Account {
  name: string;
  uid: number;
  gid: number;
  comment: string;
  home: string;
  shell: string;
}

/** The passwd entry, or null. */
export async function account(name: string, signal?: AbortSignal): Promise<Account | null> {
  const r = await runCommand(['getent', 'passwd', name], { signal });
  if (r.code !== 0) return null;
  const [login, , uid, gid, comment, home, shell] = r.stdout.trim().split(':');
  return { name: login, uid: Number(uid), gid: Number(gid), comment, home, shell };
}

/** The group entry, or null. */
async function groupEntry(name: string, signal?: AbortSignal): Promise<{ gid: number; members: string[] } | null> {
  const r = await runCommand(['getent', 'group', name], { signal });
  if (r.code !== 0) return null;
  const [, , gid, members] = r.stdout.trim().split(':');
  return { gid: Number(gid), members: members ? members.split(',') : [] };
}

/** Every group the user is in, its primary group first. */
async function groupsOf(name: string, signal?: AbortSignal): Promise<string[]> {
  return (await mustRun('user', ['id', '-nG', '--', name], { signal })).trim().split(/\s+/).filter(Boolean);
}

function optInteger(fn: string, key: string, value: LuaValue | undefined): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new Error(`user.${fn}: option ${key} must be a non-negative integer`);
  return value;
}

function optList(fn: string, key: string, value: LuaValue | undefined): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw new Error(`user.${fn}: option ${key} must be a list of group names`);
  return value as string[];
}

const PRESENT = ['uid', 'group', 'groups', 'append', 'shell', 'home', 'comment', 'system'] as const;

async function present(call: LuaCallContext, nameArg: LuaValue, optsArg: LuaValue): Promise<Change> {
  const name = requireString('user.present', nameArg, 1, 'a user name');
  const o = options('user.present', optsArg, 2, PRESENT);
  const uid = optInteger('present', 'uid', o.uid);
  const group = optString('user.present', 'group', o.group);
  const groups = optList('present', 'groups', o.groups);
  const append = optBoolean('user.present', 'append', o.append) ?? true;
  const shell = optString('user.present', 'shell', o.shell);
  const home = optString('user.present', 'home', o.home);
  const comment = optString('user.present', 'comment', o.comment);
  const current = await account(name, call.signal);
  if (!current) {
    const argv = ['useradd'];
    if (optBoolean('user.present', 'system', o.system)) argv.push('--system');
    else argv.push('--create-home');
    if (uid !== undefined) argv.push('--uid', String(uid));
    if (group) argv.push('--gid', group);
    if (groups?.length) argv.push('--groups', groups.join(','));
    if (shell) argv.push('--shell', shell);
    if (home) argv.push('--home-dir', home);
    if (comment !== undefined) argv.push('--comment', comment);
    argv.push('--', name);
    return change(
      call,
      true,
      `create user ${name}`,
      async () => void (await mustRun('user.present', argv, { signal: call.signal })),
      {
        name,
        created: true,
      },
    );
  }
  const argv = ['usermod'];
  if (uid !== undefined && uid !== current.uid) argv.push('--uid', String(uid));
  if (group) {
    const wanted = await groupEntry(group, call.signal);
    if (!wanted || wanted.gid !== current.gid) argv.push('--gid', group);
  }
  if (shell && shell !== current.shell) argv.push('--shell', shell);
  if (home && home !== current.home) argv.push('--home', home);
  if (comment !== undefined && comment !== current.comment) argv.push('--comment', comment);
  if (groups) {
    const [, ...supplementary] = await groupsOf(name, call.signal);
    const missing = groups.filter((g) => !supplementary.includes(g));
    const extra = supplementary.filter((g) => !groups.includes(g));
    if (missing.length > 0 || (!append && extra.length > 0)) {
      argv.push('--groups', (append ? missing : groups).join(','));
      if (append) argv.push('--append');
    }
  }
  argv.push('--', name);
  return change(
    call,
    argv.length > 3,
    `change user ${name}: ${argv.slice(1, -2).join(' ')}`,
    async () => void (await mustRun('user.present', argv, { signal: call.signal })),
    { name, created: false },
  );
}

/** A key line's type and base64, which say which key it is; the comment and options do not. */
export function keyIdentity(line: string): string | null {
  const match = /(?:^|\s)((?:ssh|ecdsa|sk)-[\w@.-]+)\s+([A-Za-z0-9+/=]+)/.exec(line);
  return match ? `${match[1]} ${match[2]}` : null;
}

async function authorizedKey(call: LuaCallContext, nameArg: LuaValue, keyArg: LuaValue, optsArg: LuaValue) {
  const name = requireString('user.authorized_key', nameArg, 1, 'a user name');
  const key = requireString('user.authorized_key', keyArg, 2, 'a public key line').trim();
  const identity = keyIdentity(key);
  if (!identity)
    throw new Error('user.authorized_key: argument 2 is not an SSH public key line ("ssh-ed25519 AAAA... comment")');
  const state =
    optString('user.authorized_key', 'state', options('user.authorized_key', optsArg, 3, ['state'] as const).state) ??
    'present';
  if (state !== 'present' && state !== 'absent')
    throw new Error('user.authorized_key: state must be "present" or "absent"');
  const owner = await account(name, call.signal);
  if (!owner) throw new Error(`user.authorized_key: no user named ${name}`);
  const dir = join(owner.home, '.ssh');
  const path = join(dir, 'authorized_keys');
  let lines: string[] = [];
  try {
    lines = (await readFile(path, 'utf8')).split('\n').filter((l) => l !== '');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const has = lines.some((l) => keyIdentity(l) === identity);
  const next = state === 'present' ? [...lines, key] : lines.filter((l) => keyIdentity(l) !== identity);
  const differs = state === 'present' ? !has : has;
  return change(
    call,
    differs,
    `${state === 'present' ? 'add a key to' : 'remove a key from'} ${path}`,
    async () => {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await chown(dir, owner.uid, owner.gid);
      // Written beside it and renamed: sshd never reads half a file.
      const temp = `${path}.runner-${process.pid}`;
      await writeFile(temp, next.length ? `${next.join('\n')}\n` : '', { mode: 0o600 });
      await chmod(temp, 0o600);
      await chown(temp, owner.uid, owner.gid);
      await rename(temp, path);
    },
    { path },
  );
}

export function createUserModule(): LuaModuleImplementation<Fn> {
  return {
    present,
    async absent(call, nameArg, optsArg) {
      const name = requireString('user.absent', nameArg, 1, 'a user name');
      const removeHome = optBoolean(
        'user.absent',
        'remove_home',
        options('user.absent', optsArg, 2, ['remove_home'] as const).remove_home,
      );
      const exists = (await account(name, call.signal)) !== null;
      const argv = ['userdel', ...(removeHome ? ['--remove'] : []), '--', name];
      return change(
        call,
        exists,
        `remove user ${name}`,
        async () => void (await mustRun('user.absent', argv, { signal: call.signal })),
        { name },
      );
    },
    async info(call, nameArg) {
      const name = requireString('user.info', nameArg, 1, 'a user name');
      const found = await account(name, call.signal);
      if (!found) return { exists: false };
      return { exists: true, ...found, groups: await groupsOf(name, call.signal) };
    },
    async group_present(call, nameArg, optsArg) {
      const name = requireString('user.group_present', nameArg, 1, 'a group name');
      const o = options('user.group_present', optsArg, 2, ['gid', 'system'] as const);
      const gid = optInteger('group_present', 'gid', o.gid);
      const current = await groupEntry(name, call.signal);
      if (current && (gid === undefined || gid === current.gid))
        return change(call, false, '', async () => {}, { name });
      const argv = current
        ? ['groupmod', '--gid', String(gid), '--', name]
        : [
            'groupadd',
            ...(optBoolean('user.group_present', 'system', o.system) ? ['--system'] : []),
            ...(gid !== undefined ? ['--gid', String(gid)] : []),
            '--',
            name,
          ];
      return change(
        call,
        true,
        `${current ? 'change' : 'create'} group ${name}`,
        async () => void (await mustRun('user.group_present', argv, { signal: call.signal })),
        { name },
      );
    },
    async group_absent(call, nameArg) {
      const name = requireString('user.group_absent', nameArg, 1, 'a group name');
      const exists = (await groupEntry(name, call.signal)) !== null;
      return change(
        call,
        exists,
        `remove group ${name}`,
        async () => void (await mustRun('user.group_absent', ['groupdel', '--', name], { signal: call.signal })),
        { name },
      );
    },
    async add_to_group(call, userArg, groupArg) {
      const name = requireString('user.add_to_group', userArg, 1, 'a user name');
      const group = requireString('user.add_to_group', groupArg, 2, 'a group name');
      const member = (await groupsOf(name, call.signal)).includes(group);
      return change(
        call,
        !member,
        `add ${name} to group ${group}`,
        async () =>
          void (await mustRun('user.add_to_group', ['usermod', '--append', '--groups', group, '--', name], {
            signal: call.signal,
          })),
      );
    },
    async remove_from_group(call, userArg, groupArg) {
      const name = requireString('user.remove_from_group', userArg, 1, 'a user name');
      const group = requireString('user.remove_from_group', groupArg, 2, 'a group name');
      const entry = await groupEntry(group, call.signal);
      const member = entry?.members.includes(name) ?? false;
      return change(
        call,
        member,
        `remove ${name} from group ${group}`,
        async () =>
          void (await mustRun('user.remove_from_group', ['gpasswd', '--delete', name, group], { signal: call.signal })),
      );
    },
    authorized_key: authorizedKey,
  };
}
