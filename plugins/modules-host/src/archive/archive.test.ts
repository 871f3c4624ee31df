// Real archives of real files in a temp directory: round trips in each format, idempotence, dry-run,
// and archives made hostile with the libraries themselves (tar-stream, yazl), kept to a few KiB.
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { functionSpecProblem } from '@runner/plugin-sdk';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { pack as tarPack } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { ZipFile } from 'yazl';
import { archiveModule, plugin } from '../../index.js';
import { createArchiveModule } from './archive.js';

const root = mkdtempSync(join(tmpdir(), 'archive-test-'));
const archive = createArchiveModule();
const call = () => luaCallContext().call;
const dry = () => luaCallContext({ dryRun: true }).call;

/** A small tree with what modes and links look like: an executable, a private file, an empty one. */
function makeTree(at: string): string {
  const app = join(at, 'app');
  mkdirSync(join(app, 'bin'), { recursive: true });
  writeFileSync(join(app, 'bin', 'run'), '#!/bin/sh\necho run\n');
  chmodSync(join(app, 'bin', 'run'), 0o755);
  writeFileSync(join(app, 'conf.txt'), 'port = 8080\n');
  chmodSync(join(app, 'conf.txt'), 0o640);
  writeFileSync(join(app, 'data.bin'), randomBytes(3000));
  writeFileSync(join(app, 'empty'), '');
  chmodSync(join(app, 'empty'), 0o600);
  symlinkSync('conf.txt', join(app, 'conf-link'));
  chmodSync(app, 0o750);
  return app;
}

/** Every path under dir with its type, mode and content (or link target). */
function snapshot(dir: string, prefix = ''): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      const st = lstatSync(path);
      const mode = (st.mode & 0o7777).toString(8);
      const rel = `${prefix}${name}`;
      if (st.isSymbolicLink()) return [`${rel} link ${readlinkSync(path)}`];
      if (st.isDirectory()) return [`${rel} dir ${mode}`, ...snapshot(path, `${rel}/`)];
      return [`${rel} file ${mode} ${readFileSync(path).toString('base64')}`];
    });
}

async function tarBuffer(entries: { name: string; type?: 'file' | 'symlink'; body?: string; linkname?: string }[]) {
  const pack = tarPack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const chunk of pack) chunks.push(chunk as Buffer);
  })();
  for (const e of entries) pack.entry({ name: e.name, type: e.type ?? 'file', linkname: e.linkname }, e.body ?? '');
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

async function zipBuffer(add: (zip: ZipFile) => void): Promise<Buffer> {
  const zip = new ZipFile();
  add(zip);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('archive round trips', () => {
  it.each(['tar', 'tar.gz', 'zip'])(
    '%s: contents and modes come back byte for byte; changed only once',
    async (format) => {
      const dir = mkdtempSync(join(root, 'trip-'));
      const app = makeTree(dir);
      const file = join(dir, `app.${format}`);

      expect(await archive.create(call(), file, app)).toEqual({ changed: true, path: file, entries: 7 });
      expect(await archive.create(call(), file, app)).toEqual({ changed: false, path: file, entries: 7 });
      const listed = (await archive.list(call(), file)) as { name: string; type: string; mode: string }[];
      expect(listed.map((e) => [e.name.replace(/\/$/, ''), e.type, e.mode])).toEqual([
        ['app', 'directory', '0750'],
        ['app/bin', 'directory', '0755'],
        ['app/bin/run', 'file', '0755'],
        ['app/conf-link', 'symlink', '0777'],
        ['app/conf.txt', 'file', '0640'],
        ['app/data.bin', 'file', '0644'],
        ['app/empty', 'file', '0600'],
      ]);

      const out = join(dir, 'out');
      expect(await archive.extract(call(), file, out)).toEqual({ changed: true, path: out, entries: 7, updated: 7 });
      expect(snapshot(join(out, 'app'))).toEqual(snapshot(app));
      expect(await archive.extract(call(), file, out)).toEqual({ changed: false, path: out, entries: 7, updated: 0 });

      // One file edited in place: only it is written back.
      writeFileSync(join(out, 'app', 'conf.txt'), 'port = 9090\n');
      expect(await archive.extract(call(), file, out)).toMatchObject({ changed: true, updated: 1 });
      expect(readFileSync(join(out, 'app', 'conf.txt'), 'utf8')).toBe('port = 8080\n');
      expect(readdirSync(out)).toEqual(['app']); // no staging directory left behind

      // A changed source makes a changed archive.
      writeFileSync(join(app, 'conf.txt'), 'port = 7070\n');
      expect(await archive.create(call(), file, app)).toMatchObject({ changed: true });
    },
  );

  it("archives a directory's contents with opts.base, and follows symlinks only when asked", async () => {
    const dir = mkdtempSync(join(root, 'base-'));
    const app = makeTree(dir);
    const file = join(dir, 'contents.tar');
    await archive.create(call(), file, app, { base: app, follow_symlinks: true });
    const listed = (await archive.list(call(), file)) as { name: string; type: string }[];
    expect(listed.map((e) => e.name)).toEqual(['bin', 'bin/run', 'conf-link', 'conf.txt', 'data.bin', 'empty']);
    expect(listed.find((e) => e.name === 'conf-link')?.type).toBe('file');
    await expect(archive.create(call(), join(dir, 'x.rar'), app)).rejects.toThrow('give opts.format');
    // An archive written inside its own source is never archived into itself.
    const inside = join(app, 'self.zip');
    expect(await archive.create(call(), inside, app)).toMatchObject({ changed: true, entries: 7 });
    expect(await archive.create(call(), inside, app)).toMatchObject({ changed: false, entries: 7 });
  });
});

describe('archive dry-run', () => {
  it('writes nothing and says what it would do', async () => {
    const dir = mkdtempSync(join(root, 'dry-'));
    const app = makeTree(dir);
    const file = join(dir, 'app.tar.gz');
    expect(await archive.create(dry(), file, app)).toMatchObject({
      changed: true,
      would_change: true,
      skipped: true,
      note: `dry-run: would write tar.gz archive ${file} (7 entries)`,
    });
    expect(existsSync(file)).toBe(false);
    await archive.create(call(), file, app);
    const before = readdirSync(dir).sort();
    const out = join(dir, 'out');
    expect(await archive.extract(dry(), file, out)).toMatchObject({
      changed: true,
      skipped: true,
      note: `dry-run: would extract 7 of 7 entries of ${file} into ${out}`,
    });
    expect(readdirSync(dir).sort()).toEqual(before);
    // A source an earlier (skipped) step would have made is a note, not an error.
    expect(await archive.extract(dry(), join(dir, 'later.zip'), out)).toMatchObject({ changed: true, skipped: true });
  });
});

describe('archive.extract refuses what would escape or explode', () => {
  it('refuses ".." and absolute names, naming the entry, and writes nothing', async () => {
    const dir = mkdtempSync(join(root, 'slip-'));
    const out = join(dir, 'out');
    mkdirSync(out);
    const tar = join(dir, 'evil.tar');
    writeFileSync(
      tar,
      await tarBuffer([
        { name: 'ok.txt', body: 'fine' },
        { name: '../evil.txt', body: 'owned' },
      ]),
    );
    await expect(archive.extract(call(), tar, out)).rejects.toThrow(
      'archive.extract: entry "../evil.txt" has a ".." component (it would escape the destination); nothing was extracted',
    );
    writeFileSync(tar, await tarBuffer([{ name: '/tmp/evil.txt', body: 'owned' }]));
    await expect(archive.extract(call(), tar, out)).rejects.toThrow('entry "/tmp/evil.txt" is an absolute path');
    expect(readdirSync(out)).toEqual([]);
    expect(existsSync(join(dir, 'evil.txt'))).toBe(false);

    // yazl will not write "..", so the name is patched in: same length, the CRC covers data only.
    const zip = (await zipBuffer((z) => z.addBuffer(Buffer.from('owned'), 'AA/evil.txt'))).toString('latin1');
    writeFileSync(join(dir, 'evil.zip'), Buffer.from(zip.replaceAll('AA/evil.txt', '../evil.txt'), 'latin1'));
    await expect(archive.extract(call(), join(dir, 'evil.zip'), out)).rejects.toThrow('entry "../evil.txt" has a ".."');
    expect(readdirSync(out)).toEqual([]);
  });

  it('refuses symlinks out of the destination and entries written through a symlink', async () => {
    const dir = mkdtempSync(join(root, 'link-'));
    const out = join(dir, 'out');
    const tar = join(dir, 'links.tar');
    writeFileSync(tar, await tarBuffer([{ name: 'etc', type: 'symlink', linkname: '../../etc' }]));
    await expect(archive.extract(call(), tar, out)).rejects.toThrow(
      'entry "etc" is a symlink to "../../etc", outside the destination',
    );
    const zip = join(dir, 'links.zip');
    writeFileSync(
      zip,
      await zipBuffer((z) => {
        z.addBuffer(Buffer.from('sub'), 'inner', { mode: 0o120777 });
        z.addBuffer(Buffer.from('owned'), 'inner/x.txt');
      }),
    );
    await expect(archive.extract(call(), zip, out)).rejects.toThrow(
      'entry "inner/x.txt" would be written through the symlink entry "inner"',
    );
    // A symlink already in dest is never written through either.
    mkdirSync(out);
    symlinkSync(dir, join(out, 'sub'));
    writeFileSync(tar, await tarBuffer([{ name: 'sub/x.txt', body: 'owned' }]));
    await expect(archive.extract(call(), tar, out)).rejects.toThrow(`would be written through the symlink ${out}/sub`);
    expect(readdirSync(out)).toEqual(['sub']);
    expect(existsSync(join(dir, 'x.txt'))).toBe(false);
  });

  it('refuses a bomb past max_bytes or max_entries, leaving nothing half-extracted', async () => {
    const dir = mkdtempSync(join(root, 'bomb-'));
    const bomb = join(dir, 'bomb.zip');
    // 2 MiB of zeros deflate to about 2 KiB; a real bomb is this, nested or bigger.
    writeFileSync(
      bomb,
      await zipBuffer((z) => {
        z.addBuffer(Buffer.from('first'), 'a.txt');
        z.addBuffer(Buffer.alloc(2 * 1024 * 1024), 'zeros.bin');
      }),
    );
    expect(readFileSync(bomb).length).toBeLessThan(8 * 1024);
    const out = join(dir, 'out');
    await expect(archive.extract(call(), bomb, out, { max_bytes: 1024 * 1024 })).rejects.toThrow(
      `archive.extract: ${bomb} unpacks to more than 1.0 MiB (at "zeros.bin"); refused as a possible archive bomb; nothing was extracted`,
    );
    expect(readdirSync(dir)).toEqual(['bomb.zip']); // neither out nor its staging directory

    const many = join(dir, 'many.tar.gz');
    await archive.create(call(), many, makeTree(mkdtempSync(join(dir, 'tree-'))));
    mkdirSync(out);
    await expect(archive.extract(call(), many, out, { max_entries: 3 })).rejects.toThrow('has more than 3 entries');
    await expect(archive.extract(call(), many, out, { max_bytes: 1000 })).rejects.toThrow(
      'unpacks to more than 1000 B (at "app/data.bin")',
    );
    expect(readdirSync(out)).toEqual([]);
  });
});

describe('archive module declaration', () => {
  it('is offered by the plugin and documents every function for `runner modules info archive`', () => {
    expect(plugin.luaModules).toContain(archiveModule);
    expect(Object.keys(createArchiveModule()).sort()).toEqual(Object.keys(archiveModule.functions).sort());
    for (const [name, spec] of Object.entries(archiveModule.functions)) {
      expect(functionSpecProblem(spec), name).toBeNull();
      expect(spec.callsLua, name).toBe(false);
      expect(spec.description.length, name).toBeGreaterThan(80);
      expect(spec.example, name).toContain(`archive.${name}(`);
    }
    expect(archiveModule.functions.list.sideEffects).toBe(false);
    expect(archiveModule.functions.create.sideEffects && archiveModule.functions.extract.sideEffects).toBe(true);
    expect(archiveModule.docs).toContain('max_bytes');
  });
});
