import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { chmod, lstat, mkdir, open, readFile, readlink, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import {
  TEMPLATE_SYNTAXES,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
  type TemplateEngine,
  type TemplateSyntax,
} from '@runner/plugin-sdk';
import { fsError, isMissing } from './fs-errors.js';
import { editLines, type LineSpec } from './line-edit.js';
import { isLuaTable, luaType } from '@runner/plugin-sdk';
import { formatMode, parseMode } from './mode.js';
import type { FileFunction } from './spec.js';

type Result = Record<string, LuaValue>;

function requirePath(fn: string, value: unknown, position = 1): string {
  if (typeof value !== 'string' || value === '') {
    throw new Error(
      `file.${fn}: argument ${position} must be a path (a non-empty string), got ${value === '' ? 'an empty string' : luaType(value)}`,
    );
  }
  if (value.includes('\0')) throw new Error(`file.${fn}: argument ${position} contains a NUL byte`);
  return value;
}

/** Options table: nil and an empty table (which may arrive as `[]`) both mean none. */
function options(fn: string, value: unknown, position: number, known: readonly string[]): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isLuaTable(value))
    throw new Error(`file.${fn}: argument ${position} must be a table of options, got ${luaType(value)}`);
  if (Array.isArray(value)) {
    if (value.length === 0) return {};
    throw new Error(`file.${fn}: argument ${position} must be a table with named options (${known.join(', ')})`);
  }
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw new Error(`file.${fn}: unknown option "${key}" (known: ${known.join(', ')})`);
  }
  return value;
}

function text(fn: string, value: unknown, position: number): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw new Error(`file.${fn}: argument ${position} must be a string, got ${luaType(value)}`);
}

async function lstatOrUndefined(fn: string, path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw fsError(fn, path, error);
  }
}

async function statOrUndefined(fn: string, path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw fsError(fn, path, error);
  }
}

/** Where a write lands: through a symlink to its target, so the link survives the rename. */
async function writeTarget(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return path; // absent (or a dangling link, which the rename replaces)
  }
}

/**
 * Writes `data` to `target` atomically: a temporary file in the same directory (so the rename
 * cannot cross file systems), fsynced before the rename so a crash never leaves an empty file.
 * The owner of a file being replaced is kept when the process may set it.
 */
async function atomicWrite(
  fn: string,
  target: string,
  data: Buffer,
  mode: number | undefined,
  owner: { uid: number; gid: number } | undefined,
): Promise<void> {
  const tmp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  let handle;
  try {
    handle = await open(tmp, 'wx', mode ?? 0o666);
  } catch (error) {
    throw fsError(fn, isMissing(error) ? dirname(target) : target, error);
  }
  try {
    await handle.writeFile(data);
    // The open mode is filtered by the umask; an explicit mode must come out exactly as asked.
    if (mode !== undefined) await handle.chmod(mode);
    if (owner) await handle.chown(owner.uid, owner.gid).catch(() => {});
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(tmp, target);
  } catch (error) {
    await handle?.close().catch(() => {});
    await rm(tmp, { force: true }).catch(() => {});
    throw fsError(fn, target, error);
  }
}

interface Desired {
  fn: string;
  /** As the script gave it, for results and messages. */
  path: string;
  data: Buffer;
  mode?: number;
  /** Used when the file is created and no mode is asked for (copy takes the source's). */
  createMode?: number;
  /** "write 120 bytes to" / "copy a to": the start of the dry-run note. */
  verb: string;
}

/** Makes `path` hold exactly `data` (and `mode`), touching it only when something differs. */
async function ensureContent(call: LuaCallContext, d: Desired): Promise<Result> {
  const target = await writeTarget(d.path);
  const current = await statOrUndefined(d.fn, target);
  if (current?.isDirectory()) throw new Error(`file.${d.fn}: ${d.path} is a directory`);
  if (current && !current.isFile()) throw new Error(`file.${d.fn}: ${d.path} is not a regular file`);
  let sameContent = false;
  if (current && current.size === d.data.length) {
    try {
      sameContent = (await readFile(target)).equals(d.data);
    } catch (error) {
      throw fsError(d.fn, d.path, error);
    }
  }
  const currentMode = current ? current.mode & 0o7777 : undefined;
  const sameMode = d.mode === undefined || currentMode === d.mode;
  if (sameContent && sameMode) {
    return call.dryRun
      ? { changed: false, path: d.path, skipped: true, would_change: false, note: `dry-run: ${d.path} is up to date` }
      : { changed: false, path: d.path };
  }
  if (call.dryRun) {
    let note: string;
    if (sameContent) note = `dry-run: would change the mode of ${d.path} to ${formatMode(d.mode!)}`;
    else {
      note = `dry-run: would ${d.verb} ${d.path} (${d.data.length} bytes${d.mode !== undefined ? `, mode ${formatMode(d.mode)}` : ''})`;
      // An earlier step skipped by the same dry-run may be what would create the directory.
      if (!current && !(await statOrUndefined(d.fn, dirname(target))))
        note += `; ${dirname(d.path)} does not exist yet`;
    }
    return { changed: true, path: d.path, skipped: true, would_change: true, note };
  }
  if (sameContent) {
    try {
      await chmod(target, d.mode!);
    } catch (error) {
      throw fsError(d.fn, d.path, error);
    }
    return { changed: true, path: d.path };
  }
  const parent = await statOrUndefined(d.fn, dirname(target));
  if (!parent)
    throw new Error(`file.${d.fn}: directory ${dirname(resolve(target))} does not exist (create it with file.mkdir)`);
  await atomicWrite(
    d.fn,
    target,
    d.data,
    d.mode ?? currentMode ?? d.createMode,
    current ? { uid: current.uid, gid: current.gid } : undefined,
  );
  return { changed: true, path: d.path };
}

function syntaxOption(value: unknown): TemplateSyntax {
  if (value === undefined || value === null) return 'jinja';
  if (typeof value === 'string' && (TEMPLATE_SYNTAXES as readonly string[]).includes(value))
    return value as TemplateSyntax;
  throw new Error(
    `file.template: option syntax must be ${TEMPLATE_SYNTAXES.map((s) => `"${s}"`).join(' or ')}, got ${JSON.stringify(value) ?? luaType(value)}`,
  );
}

function regexpOption(fn: string, name: string, value: unknown): RegExp | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new Error(`file.${fn}: option ${name} must be a string, got ${luaType(value)}`);
  try {
    return new RegExp(value);
  } catch (error) {
    throw new Error(`file.${fn}: option ${name} is not a valid regular expression: ${(error as Error).message}`);
  }
}

async function readSource(fn: string, call: LuaCallContext, path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    // In dry-run the step that would have produced the source may itself have been skipped.
    if (call.dryRun && isMissing(error)) return undefined;
    throw fsError(fn, path, error);
  }
}

const LINE_OPTIONS = ['line', 'regexp', 'state', 'create', 'insert_after', 'insert_before', 'mode'] as const;

/** The `file` module; `file.template` raises a clear error when no template engine is loaded. */
export function createFileModule(engine: TemplateEngine | undefined): LuaModuleImplementation<FileFunction> {
  return {
    async read(_call, path) {
      const p = requirePath('read', path);
      try {
        return await readFile(p, 'utf8');
      } catch (error) {
        throw fsError('read', p, error);
      }
    },

    async exists(_call, path) {
      return (await statOrUndefined('exists', requirePath('exists', path))) !== undefined;
    },

    async stat(_call, path) {
      const p = requirePath('stat', path);
      const link = await lstatOrUndefined('stat', p);
      if (!link) return { exists: false, path: p };
      const isLink = link.isSymbolicLink();
      const target = isLink ? await statOrUndefined('stat', p) : link;
      const s = target ?? link;
      const type = !target
        ? 'symlink' // dangling: nothing behind it to describe
        : s.isFile()
          ? 'file'
          : s.isDirectory()
            ? 'directory'
            : 'other';
      const result: Result = {
        exists: true,
        path: p,
        type,
        size: s.size,
        mode: formatMode(s.mode),
        uid: s.uid,
        gid: s.gid,
        mtime: s.mtimeMs / 1000,
        is_link: isLink,
      };
      if (isLink) result.link_target = await readlink(p).catch(() => null);
      return result;
    },

    async write(call, path, content, opts) {
      const p = requirePath('write', path);
      const data = Buffer.from(text('write', content, 2), 'utf8');
      const o = options('write', opts, 3, ['mode']);
      return ensureContent(call, {
        fn: 'write',
        path: p,
        data,
        mode: parseMode(o.mode, 'file.write: option mode'),
        verb: 'write',
      });
    },

    async copy(call, src, dest, opts) {
      const from = requirePath('copy', src, 1);
      let to = requirePath('copy', dest, 2);
      const o = options('copy', opts, 3, ['mode']);
      const mode = parseMode(o.mode, 'file.copy: option mode');
      const source = await statOrUndefined('copy', from);
      if (source?.isDirectory())
        throw new Error(
          `file.copy: ${from} is a directory (copying trees is not supported; use exec.run({"cp", "-a", src, dest}))`,
        );
      // Like cp: a destination that is a directory receives the file under its own name.
      if ((await statOrUndefined('copy', to))?.isDirectory()) to = join(to, basename(from));
      const data = await readSource('copy', call, from);
      if (!data) {
        return {
          changed: true,
          path: to,
          skipped: true,
          would_change: true,
          note: `dry-run: would copy ${from} to ${to}; ${from} does not exist yet`,
        };
      }
      return ensureContent(call, {
        fn: 'copy',
        path: to,
        data,
        mode,
        createMode: source ? source.mode & 0o7777 : undefined,
        verb: `copy ${from} to`,
      });
    },

    async template(call, src, dest, context, opts) {
      const from = requirePath('template', src, 1);
      const to = requirePath('template', dest, 2);
      if (context !== undefined && context !== null && !isLuaTable(context)) {
        throw new Error(`file.template: argument 3 must be a table (the template's context), got ${luaType(context)}`);
      }
      const o = options('template', opts, 4, ['mode', 'syntax']);
      const mode = parseMode(o.mode, 'file.template: option mode');
      const syntax = syntaxOption(o.syntax);
      if (!engine) throw new Error('file.template: no template engine is loaded (the "template" plugin provides it)');
      const source = await readSource('template', call, from);
      if (!source) {
        return {
          changed: true,
          path: to,
          skipped: true,
          would_change: true,
          note: `dry-run: would render ${from} to ${to}; ${from} does not exist yet`,
        };
      }
      let rendered: string;
      try {
        const ctx = Array.isArray(context) || !context ? {} : (context as Record<string, unknown>);
        rendered = engine.render(source.toString('utf8'), ctx, { syntax, name: from });
      } catch (error) {
        throw new Error(`file.template: ${(error as Error).message}`, { cause: error });
      }
      return ensureContent(call, {
        fn: 'template',
        path: to,
        data: Buffer.from(rendered, 'utf8'),
        mode,
        verb: `render ${from} to`,
      });
    },

    async line_in_file(call, path, spec) {
      const p = requirePath('line_in_file', path);
      if (spec === undefined || spec === null) {
        throw new Error('file.line_in_file: argument 2 must be the line (a string) or a table of options, got nil');
      }
      const o: Record<string, unknown> =
        typeof spec === 'string' ? { line: spec } : options('line_in_file', spec, 2, LINE_OPTIONS);
      const state = o.state ?? 'present';
      if (state !== 'present' && state !== 'absent') {
        throw new Error(
          `file.line_in_file: option state must be "present" or "absent", got ${JSON.stringify(state) ?? luaType(state)}`,
        );
      }
      if (o.line !== undefined && typeof o.line !== 'string') {
        throw new Error(`file.line_in_file: option line must be a string, got ${luaType(o.line)}`);
      }
      const line = o.line as string | undefined;
      if (line !== undefined && /[\r\n]/.test(line))
        throw new Error('file.line_in_file: option line must be a single line (no newline)');
      const regexp = regexpOption('line_in_file', 'regexp', o.regexp);
      if (state === 'present' && line === undefined)
        throw new Error('file.line_in_file: option line is required when state is "present"');
      if (state === 'absent' && line === undefined && !regexp) {
        throw new Error('file.line_in_file: state "absent" needs option line or regexp');
      }
      if (o.insert_after !== undefined && o.insert_before !== undefined) {
        throw new Error('file.line_in_file: give insert_after or insert_before, not both');
      }
      const lineSpec: LineSpec = {
        line,
        regexp,
        state,
        insertAfter: o.insert_after === 'EOF' ? 'EOF' : regexpOption('line_in_file', 'insert_after', o.insert_after),
        insertBefore:
          o.insert_before === 'BOF' ? 'BOF' : regexpOption('line_in_file', 'insert_before', o.insert_before),
      };
      if (o.create !== undefined && typeof o.create !== 'boolean') {
        throw new Error(`file.line_in_file: option create must be a boolean, got ${luaType(o.create)}`);
      }
      const mode = parseMode(o.mode, 'file.line_in_file: option mode');

      const target = await writeTarget(p);
      let original: string;
      try {
        original = await readFile(target, 'utf8');
      } catch (error) {
        if (!isMissing(error)) throw fsError('line_in_file', p, error);
        if (state === 'absent') {
          return call.dryRun
            ? {
                changed: false,
                path: p,
                skipped: true,
                would_change: false,
                note: `dry-run: ${p} does not exist; nothing to remove`,
              }
            : { changed: false, path: p, removed: 0 };
        }
        if (!o.create) {
          if (call.dryRun) {
            return {
              changed: true,
              path: p,
              skipped: true,
              would_change: true,
              note: `dry-run: ${p} does not exist (file.line_in_file would fail unless an earlier step creates it; set create = true to create it)`,
            };
          }
          throw new Error(`file.line_in_file: ${p}: no such file (set create = true to create it)`);
        }
        original = '';
      }
      const edit = editLines(original, lineSpec);
      const where = edit.lineNumber ? ` (line ${edit.lineNumber})` : '';
      const result = await ensureContent(call, {
        fn: 'line_in_file',
        path: p,
        data: Buffer.from(edit.content, 'utf8'),
        mode,
        verb:
          edit.action === 'removed'
            ? `remove ${edit.removed} line(s) from`
            : edit.action === 'replaced'
              ? `replace a line${where} in`
              : 'add a line to',
      });
      if (state === 'absent' && !call.dryRun) result.removed = edit.removed;
      return result;
    },

    async mkdir(call, path, opts) {
      const p = requirePath('mkdir', path);
      const o = options('mkdir', opts, 2, ['mode']);
      const mode = parseMode(o.mode, 'file.mkdir: option mode');
      const current = await statOrUndefined('mkdir', p);
      if (current && !current.isDirectory()) throw new Error(`file.mkdir: ${p} exists and is not a directory`);
      const modeDiffers = current !== undefined && mode !== undefined && (current.mode & 0o7777) !== mode;
      if (current && !modeDiffers) {
        return call.dryRun
          ? { changed: false, path: p, skipped: true, would_change: false, note: `dry-run: directory ${p} exists` }
          : { changed: false, path: p };
      }
      if (call.dryRun) {
        const note = current
          ? `dry-run: would change the mode of ${p} to ${formatMode(mode!)}`
          : `dry-run: would create directory ${p}${mode !== undefined ? ` (mode ${formatMode(mode)})` : ''}`;
        return { changed: true, path: p, skipped: true, would_change: true, note };
      }
      try {
        if (!current) await mkdir(p, { recursive: true, mode });
        // mkdir's mode is filtered by the umask; the leaf must come out exactly as asked.
        if (mode !== undefined) await chmod(p, mode);
      } catch (error) {
        throw fsError('mkdir', p, error);
      }
      return { changed: true, path: p };
    },

    async remove(call, path) {
      const p = requirePath('remove', path);
      if (resolve(p) === '/') throw new Error('file.remove: refusing to remove /');
      const current = await lstatOrUndefined('remove', p);
      if (!current) {
        return call.dryRun
          ? { changed: false, path: p, skipped: true, would_change: false, note: `dry-run: ${p} does not exist` }
          : { changed: false, path: p };
      }
      const kind = current.isDirectory() ? 'directory tree' : current.isSymbolicLink() ? 'symlink' : 'file';
      if (call.dryRun) {
        return {
          changed: true,
          path: p,
          skipped: true,
          would_change: true,
          note: `dry-run: would remove ${p} (${kind})`,
        };
      }
      try {
        // A symlink is removed itself, never what it points to.
        await rm(p, { recursive: true, force: true });
      } catch (error) {
        throw fsError('remove', p, error);
      }
      return { changed: true, path: p };
    },
  };
}
