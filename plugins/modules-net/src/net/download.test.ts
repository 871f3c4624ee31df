import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { download } from './download.js';
import { callContext, closedPort, startServer, type TestServer } from './test-support.js';

const CONTENT = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));
const SHA = createHash('sha256').update(CONTENT).digest('hex');
const OTHER_SHA = createHash('sha256').update('something else').digest('hex');

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startServer({
    '/file.bin': (_req, res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(CONTENT),
    '/gone': (_req, res) => res.writeHead(404).end('gone'),
    '/cut': (_req, res) => {
      // Promises more than it sends, then drops the connection: the body stream fails half-way.
      res.writeHead(200, { 'content-length': String(CONTENT.length) });
      res.write(CONTENT.subarray(0, 1000), () => res.destroy());
    },
  });
});
afterAll(() => server.close());
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'net-download-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('net.download', () => {
  it('writes the file and reports its size and digest', async () => {
    const { call } = callContext();
    const dest = join(dir, 'file.bin');
    const r = (await download(call, server.url('/file.bin'), dest, null)) as Record<string, any>;
    expect(r).toMatchObject({ changed: true, path: dest, bytes: CONTENT.length, sha256: SHA });
    expect(await readFile(dest)).toEqual(CONTENT);
    // The temp file was renamed, not copied: nothing else is left in the directory.
    expect(await readdir(dir)).toEqual(['file.bin']);
  });

  it('reports no change when the file already has the content', async () => {
    const { call } = callContext();
    const dest = join(dir, 'file.bin');
    await writeFile(dest, CONTENT);
    const r = (await download(call, server.url('/file.bin'), dest, null)) as Record<string, any>;
    expect(r).toMatchObject({ changed: false, bytes: CONTENT.length, sha256: SHA });
    expect(await readdir(dir)).toEqual(['file.bin']);
  });

  it('replaces different content and keeps the old mode', async () => {
    const { call } = callContext();
    const dest = join(dir, 'file.bin');
    await writeFile(dest, 'old', { mode: 0o640 });
    const r = (await download(call, server.url('/file.bin'), dest, null)) as Record<string, any>;
    expect(r.changed).toBe(true);
    expect(await readFile(dest)).toEqual(CONTENT);
    expect((await stat(dest)).mode & 0o777).toBe(0o640);
  });

  it('sets the mode asked for, and counts a mode change as a change', async () => {
    const { call } = callContext();
    const dest = join(dir, 'tool');
    const first = (await download(call, server.url('/file.bin'), dest, { mode: '0750' })) as Record<string, any>;
    expect(first.changed).toBe(true);
    expect((await stat(dest)).mode & 0o777).toBe(0o750);
    const again = (await download(call, server.url('/file.bin'), dest, { mode: '0750' })) as Record<string, any>;
    expect(again.changed).toBe(false);
    const chmodOnly = (await download(call, server.url('/file.bin'), dest, { mode: '600' })) as Record<string, any>;
    expect(chmodOnly.changed).toBe(true);
    expect((await stat(dest)).mode & 0o777).toBe(0o600);
  });

  it('verifies the checksum and leaves no file when it does not match', async () => {
    const { call } = callContext();
    const dest = join(dir, 'file.bin');
    await expect(download(call, server.url('/file.bin'), dest, { checksum: `sha256:${OTHER_SHA}` })).rejects.toThrow(
      `net.download: ${server.url('/file.bin')}: checksum mismatch: expected sha256:${OTHER_SHA}, got sha256:${SHA}`,
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('leaves an existing file as it was when the checksum does not match', async () => {
    const { call } = callContext();
    const dest = join(dir, 'file.bin');
    await writeFile(dest, 'previous');
    await expect(download(call, server.url('/file.bin'), dest, { checksum: `sha256:${OTHER_SHA}` })).rejects.toThrow(
      'checksum mismatch',
    );
    expect(await readFile(dest, 'utf8')).toBe('previous');
    expect(await readdir(dir)).toEqual(['file.bin']);
  });

  it('accepts a matching checksum, in either case', async () => {
    const { call } = callContext();
    const dest = join(dir, 'file.bin');
    const r = (await download(call, server.url('/file.bin'), dest, {
      checksum: `sha256:${SHA.toUpperCase()}`,
    })) as Record<string, any>;
    expect(r).toMatchObject({ changed: true, sha256: SHA });
  });

  it('requests nothing when the file already matches the checksum', async () => {
    const { call } = callContext();
    const dest = join(dir, 'file.bin');
    await writeFile(dest, CONTENT);
    const before = server.hits('/file.bin');
    const r = (await download(call, server.url('/file.bin'), dest, { checksum: `sha256:${SHA}` })) as Record<
      string,
      any
    >;
    expect(r).toMatchObject({ changed: false, bytes: CONTENT.length, sha256: SHA });
    expect(server.hits('/file.bin')).toBe(before);
  });

  it('raises on an HTTP error status and writes nothing', async () => {
    const { call } = callContext();
    await expect(download(call, server.url('/gone'), join(dir, 'x'), null)).rejects.toThrow(
      `net.download: ${server.url('/gone')} answered 404`,
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('removes the temp file when the transfer breaks off', async () => {
    const { call } = callContext();
    await expect(download(call, server.url('/cut'), join(dir, 'x'), null)).rejects.toThrow(
      `net.download: GET ${server.url('/cut')} failed`,
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('raises on a refused connection, naming the URL', async () => {
    const { call } = callContext();
    const port = await closedPort();
    await expect(download(call, `http://127.0.0.1:${port}/f`, join(dir, 'f'), null)).rejects.toThrow(
      `net.download: GET http://127.0.0.1:${port}/f failed: connect ECONNREFUSED`,
    );
  });

  it('writes and requests nothing in a dry run', async () => {
    const { call } = callContext({ dryRun: true });
    const dest = join(dir, 'file.bin');
    const before = server.hits('/file.bin');
    const r = await download(call, server.url('/file.bin'), dest, null);
    expect(r).toEqual({
      skipped: true,
      path: dest,
      note: `dry-run: would download ${server.url('/file.bin')} to ${dest}`,
    });
    const withSum = (await download(call, server.url('/file.bin'), dest, { checksum: `sha256:${SHA}` })) as Record<
      string,
      any
    >;
    expect(withSum).toMatchObject({ skipped: true, changed: true });
    expect(server.hits('/file.bin')).toBe(before);
    expect(await readdir(dir)).toEqual([]);
  });

  it('reports no change in a dry run when the file already matches the checksum', async () => {
    const { call } = callContext({ dryRun: true });
    const dest = join(dir, 'file.bin');
    await writeFile(dest, CONTENT, { mode: 0o644 });
    const r = (await download(call, server.url('/file.bin'), dest, { checksum: `sha256:${SHA}` })) as Record<
      string,
      any
    >;
    expect(r).toMatchObject({ changed: false, sha256: SHA });
    const chmod = (await download(call, server.url('/file.bin'), dest, {
      checksum: `sha256:${SHA}`,
      mode: '0600',
    })) as Record<string, any>;
    expect(chmod).toMatchObject({ changed: true, skipped: true });
    expect(chmod.note).toContain('would change its mode to 0600');
    expect((await stat(dest)).mode & 0o777).toBe(0o644);
  });

  it.each([
    [
      { mode: 644 },
      'net.download: mode must be an octal string such as "0644", got number 644 (a Lua number is decimal',
    ],
    [{ mode: '0999' }, 'net.download: mode must be an octal string such as "0644", got string "0999"'],
    [{ checksum: 'md5:abc' }, 'net.download: checksum must be "sha256:<64 hex digits>", got string "md5:abc"'],
    [{ overwrite: true }, 'net.download: unknown option "overwrite" (known: mode, checksum, timeout, headers)'],
  ])('rejects bad options %j', async (opts, message) => {
    const { call } = callContext();
    await expect(download(call, server.url('/file.bin'), join(dir, 'f'), opts)).rejects.toThrow(message);
  });

  it('names a destination it cannot write', async () => {
    const { call } = callContext();
    await expect(download(call, server.url('/file.bin'), null, null)).rejects.toThrow(
      'net.download: argument 2 must be a destination path string, got nil',
    );
    await expect(download(call, server.url('/file.bin'), join(dir, 'no', 'such', 'f'), null)).rejects.toThrow(
      `net.download: the directory of ${join(dir, 'no', 'such', 'f')} (${join(dir, 'no', 'such')}) does not exist`,
    );
    await expect(download(call, server.url('/file.bin'), dir, null)).rejects.toThrow(
      `net.download: ${dir} exists and is not a regular file`,
    );
  });
});
