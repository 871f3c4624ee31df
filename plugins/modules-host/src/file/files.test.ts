import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plugin as templatePlugin } from '@runner/plugin-template';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { plugin } from '../../index.js';
import { luaCallContext, setUpLuaModules } from '@runner/plugin-sdk/testing';

type Fn = (...args: any[]) => Promise<any>;
let file: Record<string, Fn>;
let dryFile: Record<string, Fn>;
let dir: string;

beforeAll(async () => {
  // The real template plugin provides the engine file.template renders with.
  const { modules } = await setUpLuaModules([templatePlugin, plugin]);
  const impl = modules.get('file')!;
  const bind = (dryRun: boolean) =>
    Object.fromEntries(
      Object.entries(impl).map(([name, f]) => [
        name,
        async (...args: any[]) => f(luaCallContext({ dryRun }).call, ...args),
      ]),
    );
  file = bind(false);
  dryFile = bind(true);
});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'module-file-'));
});

const modeOf = (p: string) => statSync(p).mode & 0o7777;
/** Files in the test directory: a leftover temporary file would show up here. */
const entries = () => readdirSync(dir).sort();

describe('file.write', () => {
  it('creates, then reports changed = false for identical content without touching the file', async () => {
    const p = join(dir, 'a.conf');
    expect(await file.write(p, 'port = 80\n')).toEqual({ changed: true, path: p });
    expect(readFileSync(p, 'utf8')).toBe('port = 80\n');
    const inode = statSync(p).ino;
    expect(await file.write(p, 'port = 80\n')).toEqual({ changed: false, path: p });
    expect(statSync(p).ino).toBe(inode);
    expect(await file.write(p, 'port = 81\n')).toEqual({ changed: true, path: p });
    // Replaced by rename: a new inode, and no temporary file left beside it.
    expect(statSync(p).ino).not.toBe(inode);
    expect(readFileSync(p, 'utf8')).toBe('port = 81\n');
    expect(entries()).toEqual(['a.conf']);
  });

  it('sets an exact mode regardless of the umask, and a mode-only difference is a change', async () => {
    const p = join(dir, 'shared');
    await file.write(p, 'x', { mode: '0666' });
    expect(modeOf(p)).toBe(0o666);
    expect((await file.write(p, 'x', { mode: '0600' })).changed).toBe(true);
    expect(modeOf(p)).toBe(0o600);
    expect((await file.write(p, 'x', { mode: '600' })).changed).toBe(false);
  });

  it('keeps the mode of a file it replaces', async () => {
    const p = join(dir, 'secret');
    writeFileSync(p, 'old');
    chmodSync(p, 0o640);
    await file.write(p, 'new');
    expect(modeOf(p)).toBe(0o640);
  });

  it('writes through a symlink to its target, keeping the link', async () => {
    const target = join(dir, 'real.conf');
    const link = join(dir, 'link.conf');
    writeFileSync(target, 'old');
    symlinkSync(target, link);
    expect((await file.write(link, 'new')).changed).toBe(true);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('new');
  });

  it('names the missing directory and leaves nothing behind', async () => {
    await expect(file.write(join(dir, 'no/such/x'), 'x')).rejects.toThrow(
      `file.write: directory ${join(dir, 'no/such')} does not exist (create it with file.mkdir)`,
    );
    expect(entries()).toEqual([]);
  });

  it('refuses bad arguments with their position', async () => {
    await expect(file.write(dir, 'x')).rejects.toThrow(`file.write: ${dir} is a directory`);
    await expect(file.write(join(dir, 'x'), 'x', { mode: 644 })).rejects.toThrow(
      'file.write: option mode must be a string of octal digits such as "0644" (a Lua number 644 is decimal)',
    );
    await expect(file.write(join(dir, 'x'), 'x', { mode: 'rw' })).rejects.toThrow('invalid mode "rw"');
    await expect(file.write(join(dir, 'x'), { a: 1 })).rejects.toThrow(
      'file.write: argument 2 must be a string, got table',
    );
    await expect(file.write(7, 'x')).rejects.toThrow(
      'file.write: argument 1 must be a path (a non-empty string), got number',
    );
    await expect(file.write(join(dir, 'x'), 'x', { owner: 'root' })).rejects.toThrow(
      'file.write: unknown option "owner" (known: mode)',
    );
    expect(entries()).toEqual([]);
  });
});

describe('file.read, exists, stat', () => {
  it('reads a file and names the path when it cannot', async () => {
    const p = join(dir, 'r.txt');
    writeFileSync(p, 'héllo\n');
    expect(await file.read(p)).toBe('héllo\n');
    await expect(file.read(join(dir, 'missing'))).rejects.toThrow(
      `file.read: ${join(dir, 'missing')}: no such file or directory`,
    );
    await expect(file.read(dir)).rejects.toThrow(`file.read: ${dir}: is a directory`);
  });

  it('tells what exists', async () => {
    writeFileSync(join(dir, 'f'), '');
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    expect(await file.exists(join(dir, 'f'))).toBe(true);
    expect(await file.exists(dir)).toBe(true);
    expect(await file.exists(join(dir, 'nope'))).toBe(false);
    expect(await file.exists(join(dir, 'dangling'))).toBe(false);
  });

  it('describes files, directories, links and absence', async () => {
    const f = join(dir, 'f');
    writeFileSync(f, '12345');
    chmodSync(f, 0o750);
    symlinkSync(f, join(dir, 'link'));
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    const st = await file.stat(f);
    expect(st).toMatchObject({ exists: true, path: f, type: 'file', size: 5, mode: '0750', is_link: false });
    expect(st.mtime).toBeCloseTo(statSync(f).mtimeMs / 1000, 3);
    expect(st.uid).toBe(statSync(f).uid);
    expect(await file.stat(dir)).toMatchObject({ type: 'directory' });
    expect(await file.stat(join(dir, 'link'))).toMatchObject({ type: 'file', size: 5, is_link: true, link_target: f });
    expect(await file.stat(join(dir, 'dangling'))).toMatchObject({ exists: true, type: 'symlink', is_link: true });
    expect(await file.stat(join(dir, 'missing'))).toEqual({ exists: false, path: join(dir, 'missing') });
  });

  it('read-only functions run in dry-run', async () => {
    writeFileSync(join(dir, 'f'), 'x');
    expect(await dryFile.read(join(dir, 'f'))).toBe('x');
    expect((await dryFile.stat(join(dir, 'f'))).exists).toBe(true);
  });
});

describe('file.copy', () => {
  it('copies when contents differ, into a directory under its own name, with the source mode', async () => {
    const src = join(dir, 'run.sh');
    writeFileSync(src, '#!/bin/sh\n');
    chmodSync(src, 0o755);
    mkdirSync(join(dir, 'bin'));
    expect(await file.copy(src, join(dir, 'bin'))).toEqual({ changed: true, path: join(dir, 'bin/run.sh') });
    expect(modeOf(join(dir, 'bin/run.sh'))).toBe(0o755);
    expect(await file.copy(src, join(dir, 'bin'))).toEqual({ changed: false, path: join(dir, 'bin/run.sh') });
    expect((await file.copy(src, join(dir, 'copy'), { mode: '0700' })).changed).toBe(true);
    expect(modeOf(join(dir, 'copy'))).toBe(0o700);
  });

  it('names a missing source and refuses a directory', async () => {
    await expect(file.copy(join(dir, 'none'), join(dir, 'x'))).rejects.toThrow(
      `file.copy: ${join(dir, 'none')}: no such file or directory`,
    );
    await expect(file.copy(dir, join(dir, 'x'))).rejects.toThrow(`file.copy: ${dir} is a directory`);
  });
});

describe('file.template', () => {
  it('renders with the given context and writes only when the result changes', async () => {
    const src = join(dir, 'app.conf.j2');
    writeFileSync(src, 'name={{ vars.app }}\n{% for h in hosts %}server {{ h }}\n{% endfor %}');
    const dest = join(dir, 'app.conf');
    const ctx = { vars: { app: 'web' }, hosts: ['a', 'b'] };
    expect(await file.template(src, dest, ctx, { mode: '0640' })).toEqual({ changed: true, path: dest });
    expect(readFileSync(dest, 'utf8')).toBe('name=web\nserver a\nserver b\n');
    expect(modeOf(dest)).toBe(0o640);
    expect((await file.template(src, dest, ctx)).changed).toBe(false);
  });

  it('renders Go syntax and names an unknown variable with its position in the source', async () => {
    const src = join(dir, 'go.tmpl');
    writeFileSync(src, 'port {{ .port }}');
    await file.template(src, join(dir, 'out'), { port: 8080 }, { syntax: 'go' });
    expect(readFileSync(join(dir, 'out'), 'utf8')).toBe('port 8080');
    writeFileSync(src, 'line one\nname={{ vars.ap }}');
    await expect(file.template(src, join(dir, 'out2'), { vars: { app: 'web' } })).rejects.toThrow(
      /^file\.template: unknown template variable "vars\.ap" at line 2, column \d+ in .*go\.tmpl/,
    );
    expect(existsSync(join(dir, 'out2'))).toBe(false);
    await expect(file.template(src, join(dir, 'out2'), {}, { syntax: 'erb' })).rejects.toThrow(
      'file.template: option syntax must be "jinja" or "go", got "erb"',
    );
  });

  it('raises a clear error when no template engine is loaded', async () => {
    const { modules } = await setUpLuaModules([plugin]);
    writeFileSync(join(dir, 't'), 'x');
    await expect(modules.get('file')!.template(luaCallContext().call, join(dir, 't'), join(dir, 'o'))).rejects.toThrow(
      'file.template: no template engine is loaded (the "template" plugin provides it)',
    );
  });
});

describe('file.line_in_file', () => {
  it('replaces the last line matching regexp, then reports no change', async () => {
    const p = join(dir, 'sshd_config');
    writeFileSync(p, '#PermitRootLogin yes\nPort 22\n');
    const spec = { regexp: '^#?PermitRootLogin', line: 'PermitRootLogin no' };
    expect(await file.line_in_file(p, spec)).toEqual({ changed: true, path: p });
    expect(readFileSync(p, 'utf8')).toBe('PermitRootLogin no\nPort 22\n');
    expect(await file.line_in_file(p, spec)).toEqual({ changed: false, path: p });
  });

  it('appends a missing line (string shorthand), adding the final newline a file lacked', async () => {
    const p = join(dir, 'hosts');
    writeFileSync(p, '127.0.0.1 localhost');
    expect((await file.line_in_file(p, '10.0.0.5 db')).changed).toBe(true);
    expect(readFileSync(p, 'utf8')).toBe('127.0.0.1 localhost\n10.0.0.5 db\n');
    expect((await file.line_in_file(p, '10.0.0.5 db')).changed).toBe(false);
  });

  it('removes lines, counting them, and keeps CRLF endings', async () => {
    const p = join(dir, 'win.ini');
    writeFileSync(p, 'a=1\r\nb=2\r\na=3\r\n');
    expect(await file.line_in_file(p, { regexp: '^a=', state: 'absent' })).toEqual({
      changed: true,
      path: p,
      removed: 2,
    });
    expect(readFileSync(p, 'utf8')).toBe('b=2\r\n');
    expect(await file.line_in_file(p, { line: 'zzz', state: 'absent' })).toEqual({
      changed: false,
      path: p,
      removed: 0,
    });
  });

  it('creates the file only when asked, with the given mode', async () => {
    const p = join(dir, 'new.conf');
    await expect(file.line_in_file(p, 'x=1')).rejects.toThrow(
      `file.line_in_file: ${p}: no such file (set create = true`,
    );
    expect(await file.line_in_file(p, { line: 'x=1', create: true, mode: '0600' })).toEqual({ changed: true, path: p });
    expect(readFileSync(p, 'utf8')).toBe('x=1\n');
    expect(modeOf(p)).toBe(0o600);
  });

  it('inserts after or before the last matching line', async () => {
    const p = join(dir, 'list');
    writeFileSync(p, '[main]\na\n[extra]\nb\n');
    await file.line_in_file(p, { line: 'after-main', insert_after: '^\\[main\\]' });
    await file.line_in_file(p, { line: 'first', insert_before: 'BOF' });
    await file.line_in_file(p, { line: 'before-extra', insert_before: '^\\[extra\\]' });
    expect(readFileSync(p, 'utf8')).toBe('first\n[main]\nafter-main\na\nbefore-extra\n[extra]\nb\n');
  });

  it('validates its options', async () => {
    const p = join(dir, 'v');
    writeFileSync(p, '');
    await expect(file.line_in_file(p, { regexp: '(' })).rejects.toThrow(
      'file.line_in_file: option regexp is not a valid regular expression',
    );
    await expect(file.line_in_file(p, { regexp: 'x' })).rejects.toThrow(
      'option line is required when state is "present"',
    );
    await expect(file.line_in_file(p, { line: 'a\nb' })).rejects.toThrow('option line must be a single line');
    await expect(file.line_in_file(p, { line: 'a', state: 'gone' })).rejects.toThrow(
      'option state must be "present" or "absent", got "gone"',
    );
    await expect(file.line_in_file(p, { state: 'absent' })).rejects.toThrow(
      'state "absent" needs option line or regexp',
    );
    await expect(file.line_in_file(p)).rejects.toThrow(
      'argument 2 must be the line (a string) or a table of options, got nil',
    );
  });
});

describe('file.mkdir and file.remove', () => {
  it('creates parents, applies an exact mode, and changes nothing the second time', async () => {
    const p = join(dir, 'a/b/c');
    expect(await file.mkdir(p, { mode: '0770' })).toEqual({ changed: true, path: p });
    expect(statSync(p).isDirectory()).toBe(true);
    expect(modeOf(p)).toBe(0o770);
    expect(await file.mkdir(p, { mode: '0770' })).toEqual({ changed: false, path: p });
    expect(await file.mkdir(p)).toEqual({ changed: false, path: p });
    expect(await file.mkdir(p, { mode: '0755' })).toEqual({ changed: true, path: p });
    expect(modeOf(p)).toBe(0o755);
    writeFileSync(join(dir, 'plain'), '');
    await expect(file.mkdir(join(dir, 'plain'))).rejects.toThrow(
      `file.mkdir: ${join(dir, 'plain')} exists and is not a directory`,
    );
  });

  it('removes files, trees and links (not their targets); absence is no change', async () => {
    mkdirSync(join(dir, 'tree/sub'), { recursive: true });
    writeFileSync(join(dir, 'tree/sub/f'), 'x');
    mkdirSync(join(dir, 'kept'));
    writeFileSync(join(dir, 'kept/f'), 'x');
    symlinkSync(join(dir, 'kept'), join(dir, 'link'));
    expect(await file.remove(join(dir, 'link'))).toEqual({ changed: true, path: join(dir, 'link') });
    expect(existsSync(join(dir, 'kept/f'))).toBe(true);
    expect(await file.remove(join(dir, 'tree'))).toEqual({ changed: true, path: join(dir, 'tree') });
    expect(await file.remove(join(dir, 'tree'))).toEqual({ changed: false, path: join(dir, 'tree') });
    expect(entries()).toEqual(['kept']);
    await expect(file.remove('/')).rejects.toThrow('file.remove: refusing to remove /');
  });
});

describe('dry-run', () => {
  it('changes nothing and says what each function would do', async () => {
    const p = join(dir, 'f');
    writeFileSync(p, 'old\n');
    // `changed` means "would change", so a later `when` on it flows as in a real run.
    expect(await dryFile.write(p, 'new\n')).toEqual({
      changed: true,
      path: p,
      skipped: true,
      would_change: true,
      note: `dry-run: would write ${p} (4 bytes)`,
    });
    expect(await dryFile.write(p, 'old\n')).toMatchObject({
      changed: false,
      would_change: false,
      note: `dry-run: ${p} is up to date`,
    });
    expect(await dryFile.write(p, 'old\n', { mode: '0600' })).toMatchObject({
      would_change: true,
      note: `dry-run: would change the mode of ${p} to 0600`,
    });
    expect((await dryFile.line_in_file(p, 'added')).note).toBe(`dry-run: would add a line to ${p} (10 bytes)`);
    expect((await dryFile.copy(p, join(dir, 'c'))).note).toBe(
      `dry-run: would copy ${p} to ${join(dir, 'c')} (4 bytes)`,
    );
    expect(await dryFile.mkdir(join(dir, 'd'))).toMatchObject({
      changed: true,
      note: `dry-run: would create directory ${join(dir, 'd')}`,
    });
    expect(await dryFile.remove(p)).toMatchObject({ changed: true, note: `dry-run: would remove ${p} (file)` });
    expect(await dryFile.remove(join(dir, 'absent'))).toMatchObject({ changed: false, would_change: false });
    writeFileSync(join(dir, 't.j2'), '{{ x }}');
    expect((await dryFile.template(join(dir, 't.j2'), join(dir, 'out'), { x: 1 })).note).toBe(
      `dry-run: would render ${join(dir, 't.j2')} to ${join(dir, 'out')} (1 bytes)`,
    );
    expect(readFileSync(p, 'utf8')).toBe('old\n');
    expect(entries()).toEqual(['f', 't.j2']);
  });

  it('does not fail on what an earlier skipped step would have created', async () => {
    const nested = join(dir, 'later/app.conf');
    expect((await dryFile.write(nested, 'x')).note).toBe(
      `dry-run: would write ${nested} (1 bytes); ${join(dir, 'later')} does not exist yet`,
    );
    expect((await dryFile.copy(join(dir, 'built.tgz'), join(dir, 'x'))).note).toContain('does not exist yet');
    expect((await dryFile.line_in_file(join(dir, 'nope'), 'x')).note).toContain(
      'would fail unless an earlier step creates it',
    );
    expect(entries()).toEqual([]);
  });
});
