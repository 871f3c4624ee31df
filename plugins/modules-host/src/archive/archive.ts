import { randomBytes } from 'node:crypto';
import { lstat, mkdir, realpath, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import {
  luaOptionalNumber,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
} from '@runner/plugin-sdk';
import { change, optBoolean, options, optString, requireString, stringList, type Change } from '../host/args.js';
import { formatMode } from '../file/mode.js';
import {
  archiveError,
  type ArchiveFormat,
  Budget,
  DEFAULT_LIMITS,
  FORMATS,
  formatOfName,
  type Limits,
  manifestLine,
  sha256,
} from './entries.js';
import { commitExtract, planExtract } from './extract.js';
import { detectFormat, readArchive } from './read.js';
import type { ArchiveFunction } from './spec.js';
import { collectSources, sourceManifest, writeArchive } from './write.js';

const UNBOUNDED: Limits = { maxBytes: Infinity, maxEntries: Infinity };

export function createArchiveModule(): LuaModuleImplementation<ArchiveFunction> {
  return {
    async create(call, destArg, sourcesArg, optsArg) {
      const fn = 'archive.create';
      const dest = resolve(requireString(fn, destArg, 1, 'a path'));
      const sources = stringList(fn, sourcesArg, 2);
      const o = options(fn, optsArg, 3, ['format', 'base', 'follow_symlinks'] as const);
      const format = formatOption(fn, o.format) ?? formatOfName(dest);
      if (!format)
        throw new Error(
          `${fn}: ${dest}: the name does not say the format (.tar, .tar.gz, .tgz, .zip): give opts.format`,
        );
      if ((await stat(dest).catch(() => undefined))?.isDirectory()) throw new Error(`${fn}: ${dest} is a directory`);
      const missing = call.dryRun ? await firstMissing(sources) : undefined;
      if (missing) return dryRunNote(`would write ${format} archive ${dest}; ${missing} does not exist yet`, dest);
      const { entries, ignored } = await collectSources(fn, sources, {
        base: optString(fn, 'base', o.base),
        followSymlinks: optBoolean(fn, 'follow_symlinks', o.follow_symlinks) ?? false,
        exclude: dest,
      });
      const same = sameLines(await sourceManifest(fn, entries), await archiveManifest(dest, format));
      const extra: Change = { path: dest, entries: entries.length, ...(ignored.length ? { ignored } : {}) };
      const what = `write ${format} archive ${dest} (${entries.length} entries)`;
      return change(call, !same, what, () => writeArchive(fn, format, dest, entries), extra);
    },

    async extract(call, srcArg, destArg, optsArg) {
      const fn = 'archive.extract';
      const src = resolve(requireString(fn, srcArg, 1, 'a path'));
      const dest = resolve(requireString(fn, destArg, 2, 'a path'));
      const o = options(fn, optsArg, 3, ['format', 'max_bytes', 'max_entries'] as const);
      const limits: Limits = {
        maxBytes: positiveInteger(fn, 'max_bytes', o.max_bytes) ?? DEFAULT_LIMITS.maxBytes,
        maxEntries: positiveInteger(fn, 'max_entries', o.max_entries) ?? DEFAULT_LIMITS.maxEntries,
      };
      if (call.dryRun && (await firstMissing([src])))
        return dryRunNote(`would extract ${src} into ${dest}; ${src} does not exist yet`, dest);
      const format = await detectFormat(fn, src, formatOption(fn, o.format)).catch((e) => {
        throw archiveError(fn, src, e);
      });
      const target = await destination(fn, dest, call);
      if (typeof target === 'string') return dryRunNote(target, dest);
      const stage = call.dryRun ? null : await makeStage(target.path, target.exists);
      try {
        const plan = await planExtract(fn, src, format, target.path, limits, stage);
        const n = plan.updates.length;
        const extra: Change = { path: dest, entries: plan.entries, updated: n };
        const what = `extract ${n} of ${plan.entries} entries of ${src} into ${dest}`;
        return await change(call, n > 0, what, () => commitExtract(plan, stage!, target.path, target.exists), extra);
      } catch (error) {
        throw archiveError(fn, dest, error);
      } finally {
        if (stage) await rm(stage, { recursive: true, force: true });
      }
    },

    async list(_call, srcArg, optsArg) {
      const fn = 'archive.list';
      const src = resolve(requireString(fn, srcArg, 1, 'a path'));
      const o = options(fn, optsArg, 2, ['format', 'max_entries'] as const);
      const maxEntries = positiveInteger(fn, 'max_entries', o.max_entries) ?? DEFAULT_LIMITS.maxEntries;
      const format = await detectFormat(fn, src, formatOption(fn, o.format)).catch((e) => {
        throw archiveError(fn, src, e);
      });
      const entries: LuaValue[] = [];
      for await (const e of readArchive(fn, src, format, new Budget(fn, src, { ...UNBOUNDED, maxEntries }))) {
        const mtime = Math.floor(e.mtime.getTime() / 1000);
        entries.push({ name: e.name, type: e.type, size: e.size, mode: formatMode(e.mode), mtime, link: e.linkname });
      }
      return entries;
    },
  };
}

function formatOption(fn: string, value: LuaValue | undefined): ArchiveFormat | undefined {
  const given = optString(fn, 'format', value);
  if (given !== undefined && !(FORMATS as readonly string[]).includes(given))
    throw new Error(`${fn}: option format must be one of ${FORMATS.join(', ')}, got ${JSON.stringify(given)}`);
  return given as ArchiveFormat | undefined;
}

function positiveInteger(fn: string, name: string, value: LuaValue | undefined): number | undefined {
  const n = luaOptionalNumber(fn, `option ${name}`, value);
  if (n !== undefined && (!Number.isInteger(n) || n <= 0))
    throw new Error(`${fn}: option ${name} must be a positive whole number, got ${n}`);
  return n;
}

async function firstMissing(paths: readonly string[]): Promise<string | undefined> {
  for (const path of paths) if (!(await lstat(path).catch(() => undefined))) return path;
  return undefined;
}

/** What a dry-run says when an earlier (skipped) step would have made what this one needs. */
function dryRunNote(what: string, path: string): Change {
  return { changed: true, would_change: true, skipped: true, path, note: `dry-run: ${what}` };
}

/**
 * dest as a real path and whether it exists; a dry-run note when its parent is missing (an earlier
 * skipped step may make it). dest itself may be a symlink to a directory: that is the caller's word.
 */
async function destination(fn: string, dest: string, call: LuaCallContext) {
  const st = await stat(dest).catch(() => undefined);
  if (st && !st.isDirectory()) throw new Error(`${fn}: ${dest} exists and is not a directory`);
  if (st) return { path: await realpath(dest), exists: true };
  if (await stat(dirname(dest)).catch(() => undefined)) return { path: dest, exists: false };
  if (call.dryRun) return `would extract into ${dest}; ${dirname(dest)} does not exist yet`;
  throw new Error(`${fn}: ${dirname(dest)}: no such directory (the destination's parent must exist; see file.mkdir)`);
}

/** Inside dest when it exists (the same file system, so entries rename into place), else beside it. */
async function makeStage(dest: string, destExists: boolean): Promise<string> {
  const id = randomBytes(6).toString('hex');
  const stage = destExists
    ? join(dest, `.runner-extract-${id}`)
    : join(dirname(dest), `.${basename(dest)}.${id}.extract`);
  await mkdir(stage);
  return stage;
}

/** The manifest of the archive at dest, or null when there is none (or it cannot be read). */
async function archiveManifest(dest: string, format: ArchiveFormat): Promise<string[] | null> {
  if (!(await stat(dest).catch(() => undefined))) return null;
  try {
    const lines: string[] = [];
    for await (const e of readArchive('archive.create', dest, format, new Budget('archive.create', dest, UNBOUNDED)))
      lines.push(manifestLine(e, e.type === 'file' ? await sha256(e.data()) : undefined));
    return lines;
  } catch {
    return null; // not an archive of that format: it is replaced
  }
}

function sameLines(a: readonly string[], b: readonly string[] | null): boolean {
  return b !== null && a.length === b.length && a.every((line, i) => line === b[i]);
}
