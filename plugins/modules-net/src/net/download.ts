import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, open, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { InvalidInputError, type LuaCallContext, type LuaValue } from '@runner/plugin-sdk';
import { deadline, failure } from './abort.js';
import {
  describe,
  durationOption,
  headersOption,
  moveCredentials,
  readOptions,
  requireString,
  requireUrl,
  secondsSince,
  shownUrl,
} from './args.js';

/** Downloads go to disk, not memory, so they get no size bound, but a longer default time limit. */
export const DEFAULT_DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

interface Existing {
  sha256: string;
  bytes: number;
  mode: number;
}

/** `net.download(url, dest [, {mode, checksum, timeout, headers}])` */
export async function download(
  call: LuaCallContext,
  urlArg: LuaValue,
  destArg: LuaValue,
  optsArg: LuaValue,
): Promise<LuaValue> {
  const fn = 'net.download';
  const url = requireUrl(fn, 1, urlArg);
  const dest = resolve(requireString(fn, 2, 'destination path', destArg));
  const opts = readOptions(fn, 3, optsArg, ['mode', 'checksum', 'timeout', 'headers']);
  const mode = parseMode(fn, opts.mode);
  const checksum = parseChecksum(fn, opts.checksum);
  const timeoutMs = durationOption(fn, 'timeout', opts.timeout, DEFAULT_DOWNLOAD_TIMEOUT_MS);
  const headers = headersOption(fn, opts.headers);
  const shown = shownUrl(url);
  await checkDestination(fn, dest);
  const existing = await digestOf(dest);

  // With a checksum the file's content is known in advance: a file that already has it needs no request.
  if (checksum !== undefined && existing?.sha256 === checksum) {
    const changed = await applyMode(call, dest, existing.mode, mode);
    const result: Record<string, LuaValue> = { changed, path: dest, bytes: existing.bytes, sha256: existing.sha256 };
    if (call.dryRun && changed) {
      result.skipped = true;
      result.note = `dry-run: ${dest} already has that content; would change its mode to ${formatMode(mode!)}`;
    }
    return result;
  }
  if (call.dryRun) {
    const result: Record<string, LuaValue> = {
      skipped: true,
      path: dest,
      note: `dry-run: would download ${shown} to ${dest}`,
    };
    // Without a checksum, whether the content would differ is unknown until it is fetched.
    if (checksum !== undefined) result.changed = true;
    return result;
  }

  const started = performance.now();
  const limit = { deadline: deadline(call.signal, timeoutMs), timeoutMs };
  const target = `GET ${shown}`;
  moveCredentials(url, headers);
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: limit.deadline.signal });
  } catch (error) {
    throw failure(fn, target, error, call.signal, limit);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`${fn}: ${shown} answered ${response.status}`);
  }

  // A temp file beside the destination, so the final rename stays on one file system and is atomic.
  const temp = join(dirname(dest), `.${basename(dest)}.${randomBytes(6).toString('hex')}.part`);
  let renamed = false;
  try {
    let written: { sha256: string; bytes: number };
    try {
      written = await writeBody(response, temp);
    } catch (error) {
      throw failure(fn, target, error, call.signal, limit);
    }
    if (checksum !== undefined && written.sha256 !== checksum) {
      throw new Error(
        `${fn}: ${shown}: checksum mismatch: expected sha256:${checksum}, got sha256:${written.sha256} (${dest} left as it was)`,
      );
    }
    const duration = secondsSince(started);
    if (existing?.sha256 === written.sha256) {
      const changed = await applyMode(call, dest, existing.mode, mode);
      return { changed, path: dest, bytes: written.bytes, sha256: written.sha256, duration };
    }
    // Keep the mode of the file being replaced unless one is asked for: replacing content is not a chmod.
    const wanted = mode ?? existing?.mode;
    if (wanted !== undefined) await chmod(temp, wanted);
    await rename(temp, dest);
    renamed = true;
    call.logger.info(`${fn}: wrote ${dest}`, { url: shown, bytes: written.bytes, duration });
    return { changed: true, path: dest, bytes: written.bytes, sha256: written.sha256, duration };
  } finally {
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
}

/** Streams the body to `temp`, hashing as it goes, and flushes it to disk before it may be renamed. */
async function writeBody(response: Response, temp: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  // `wx`: a leftover of the same random name is never overwritten.
  const handle = await open(temp, 'wx');
  try {
    if (response.body) {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        hash.update(chunk);
        bytes += chunk.byteLength;
        await handle.write(chunk);
      }
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { sha256: hash.digest('hex'), bytes };
}

async function checkDestination(fn: string, dest: string): Promise<void> {
  const dir = dirname(dest);
  const dirStat = await stat(dir).catch(() => undefined);
  if (!dirStat?.isDirectory()) {
    throw new InvalidInputError(`${fn}: the directory of ${dest} (${dir}) does not exist`);
  }
  const destStat = await stat(dest).catch(() => undefined);
  if (destStat && !destStat.isFile()) {
    throw new InvalidInputError(`${fn}: ${dest} exists and is not a regular file; give the path of a file`);
  }
}

async function digestOf(path: string): Promise<Existing | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return { sha256: hash.digest('hex'), bytes: info.size, mode: info.mode & 0o7777 };
}

/** Sets the mode when one is asked for and differs; true when it did (or, in a dry run, would). */
async function applyMode(
  call: LuaCallContext,
  path: string,
  current: number,
  wanted: number | undefined,
): Promise<boolean> {
  if (wanted === undefined || current === wanted) return false;
  if (!call.dryRun) await chmod(path, wanted);
  return true;
}

/**
 * Modes are octal strings ("0644"): Lua has no octal literals, so the number 0644 is six hundred
 * and forty-four, which would silently give a nonsense mode.
 */
function parseMode(fn: string, value: LuaValue): number | undefined {
  if (value === null || value === undefined) return undefined;
  const match = typeof value === 'string' ? /^(?:0o)?([0-7]{3,4})$/.exec(value.trim()) : null;
  if (!match) {
    const hint = typeof value === 'number' ? ' (a Lua number is decimal: write the mode as a string)' : '';
    throw new InvalidInputError(`${fn}: mode must be an octal string such as "0644", got ${describe(value)}${hint}`);
  }
  return parseInt(match[1], 8);
}

function formatMode(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}

function parseChecksum(fn: string, value: LuaValue): string | undefined {
  if (value === null || value === undefined) return undefined;
  const match = typeof value === 'string' ? /^sha256:([0-9a-fA-F]{64})$/.exec(value.trim()) : null;
  if (!match) {
    throw new InvalidInputError(`${fn}: checksum must be "sha256:<64 hex digits>", got ${describe(value)}`);
  }
  return match[1].toLowerCase();
}
