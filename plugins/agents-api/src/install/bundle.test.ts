// The archive writer against GNU tar, and the bundle of this checkout: what it holds, and that
// the unpacked copy runs `runner` on its own.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { collectBundle, findInstallRoot, releaseName } from './bundle.js';
import { tarStream, type TarEntry } from './tar.js';

async function writeArchive(entries: TarEntry[], gzip = false): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'runner-tar-')), gzip ? 'a.tar.gz' : 'a.tar');
  await pipeline(
    ...([tarStream(entries), ...(gzip ? [createGzip({ level: 1 })] : []), createWriteStream(file)] as [any, any]),
  );
  return file;
}

describe('tarStream', () => {
  it('writes files, directories, symlinks, long paths and long link targets that GNU tar reads', async () => {
    const src = mkdtempSync(join(tmpdir(), 'runner-tar-src-'));
    writeFileSync(join(src, 'script.sh'), '#!/bin/sh\necho hi\n');
    const longDir = `${'d'.repeat(60)}/${'e'.repeat(60)}/${'f'.repeat(60)}`;
    const veryLong = `${'x'.repeat(120)}/${'y'.repeat(120)}.txt`;
    const now = Math.floor(Date.now() / 1000);
    const entries: TarEntry[] = [
      { type: 'dir', path: 'top', mode: 0o755, mtime: now },
      { type: 'file', path: 'top/script.sh', mode: 0o755, mtime: now, size: 0, source: join(src, 'script.sh') },
      {
        type: 'file',
        path: `top/${longDir}/nested.json`,
        mode: 0o644,
        mtime: now,
        size: 0,
        source: Buffer.from('{"a":1}'),
      },
      { type: 'file', path: `top/${veryLong}`, mode: 0o600, mtime: now, size: 0, source: Buffer.from('long') },
      { type: 'file', path: 'top/empty', mode: 0o644, mtime: now, size: 0, source: Buffer.alloc(0) },
      { type: 'symlink', path: 'top/link', mtime: now, target: 'script.sh' },
      { type: 'symlink', path: 'top/longlink', mtime: now, target: `${'../'.repeat(40)}target` },
    ];
    const out = mkdtempSync(join(tmpdir(), 'runner-tar-out-'));
    execFileSync('tar', ['-xf', await writeArchive(entries), '-C', out]);
    expect(readFileSync(join(out, 'top/script.sh'), 'utf8')).toBe('#!/bin/sh\necho hi\n');
    expect(execFileSync('stat', ['-c', '%a', join(out, 'top/script.sh')], { encoding: 'utf8' }).trim()).toBe('755');
    expect(readFileSync(join(out, `top/${longDir}/nested.json`), 'utf8')).toBe('{"a":1}');
    expect(readFileSync(join(out, `top/${veryLong}`), 'utf8')).toBe('long');
    expect(readFileSync(join(out, 'top/empty'), 'utf8')).toBe('');
    expect(readlinkSync(join(out, 'top/link'))).toBe('script.sh');
    expect(readlinkSync(join(out, 'top/longlink'))).toBe(`${'../'.repeat(40)}target`);
    // A gzip stream as the upload sends it.
    const out2 = mkdtempSync(join(tmpdir(), 'runner-tar-out-'));
    execFileSync('tar', ['-xzf', await writeArchive(entries, true), '-C', out2]);
    expect(readFileSync(join(out2, 'top/script.sh'), 'utf8')).toBe('#!/bin/sh\necho hi\n');
  });
});

describe('the agent bundle', () => {
  const bundle = collectBundle();
  const paths = new Set(bundle.entries.map((e) => e.path));

  it('holds the built kernel, SDK and plugins with their production dependencies, not sources or dev tools', () => {
    expect(bundle.root).toBe(findInstallRoot());
    for (const p of [
      'package.json',
      'BUNDLE.json',
      'kernel/bin/runner.js',
      'kernel/dist/src/cli/main.js',
      'plugin-sdk/dist/index.js',
    ]) {
      expect(paths.has(p), p).toBe(true);
    }
    expect(paths.has('plugins/agents-api/dist/index.js')).toBe(true);
    expect(paths.has('node_modules/ssh2/package.json')).toBe(true);
    expect(
      paths.has('node_modules/commander/package.json') || paths.has('kernel/node_modules/commander/package.json'),
    ).toBe(true);
    const all = [...paths];
    const own = all.filter((p) => !p.includes('node_modules/'));
    expect(own.filter((p) => /\.ts$/.test(p))).toEqual([]);
    expect(own.filter((p) => p.includes('.test.'))).toEqual([]);
    for (const dev of ['vitest', 'typescript', 'esbuild', 'eslint', 'prettier', '@types/node']) {
      expect(
        all.some((p) => p.startsWith(`node_modules/${dev}/`)),
        dev,
      ).toBe(false);
    }
    expect(all.some((p) => p.startsWith('ui/') || p.startsWith('desktop/'))).toBe(false);
    const link = bundle.entries.find((e) => e.path === 'node_modules/@runner/plugin-sdk');
    expect(link).toMatchObject({ type: 'symlink', target: '../../plugin-sdk' });
  });

  it('unpacks into a runner that works without the checkout', async () => {
    const out = mkdtempSync(join(tmpdir(), 'runner-bundle-'));
    execFileSync('tar', ['-xzf', await writeArchive(bundle.entries, true), '-C', out]);
    const dataDir = join(out, 'data');
    mkdirSync(dataDir);
    const help = spawnSync(process.execPath, [join(out, 'kernel/bin/runner.js'), 'agent', '--help'], {
      encoding: 'utf8',
      cwd: tmpdir(),
      env: { ...process.env, RUNNER_DATA_DIR: dataDir },
    });
    expect(help.stderr).toBe('');
    expect(help.stdout).toMatch(/^ {2}install /m);
    const modules = spawnSync(
      process.execPath,
      [join(out, 'kernel/bin/runner.js'), 'modules', 'list', '--output', 'json'],
      {
        encoding: 'utf8',
        cwd: tmpdir(),
        env: { ...process.env, RUNNER_DATA_DIR: dataDir },
      },
    );
    expect(modules.status).toBe(0);
    expect(modules.stdout).toContain('"exec"');
    expect(JSON.parse(readFileSync(join(out, 'BUNDLE.json'), 'utf8'))).toMatchObject({
      version: bundle.version,
      platform: 'linux',
    });
    expect(existsSync(join(out, 'plugins/agents-api/src'))).toBe(false);
  });

  it('names releases by version and time', () => {
    expect(releaseName('0.1.0', new Date('2025-03-04T05:06:07.890Z'))).toBe('0.1.0-20250304T050607890Z');
  });
});
