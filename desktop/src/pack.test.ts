// Packs the app as electron-builder would (same files, same asar library version) and checks
// what lands inside: electron-builder itself cannot run here, since it downloads Electron.
import { copyFile, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, matchesGlob, relative, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { createPackage, extractFile, listPackage } from '@electron/asar';
import { validateConfiguration } from 'app-builder-lib/out/util/config/config.js';
import { DebugLogger } from 'builder-util';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const desktopDir = resolve(import.meta.dirname, '..');
const config = parse(readFileSync(join(desktopDir, 'electron-builder.yml'), 'utf8')) as { files: string[] };

let work: string;
let asar: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'runner-desktop-pack-'));
  const stage = join(work, 'app');
  // The files electron-builder takes: those of desktop/ that its `files` patterns match.
  const walk = async (dir: string): Promise<string[]> =>
    (
      await Promise.all(
        (await readdir(dir, { withFileTypes: true }))
          .filter((e) => !['node_modules', 'release'].includes(e.name))
          .map((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)])),
      )
    ).flat();
  for (const file of await walk(desktopDir)) {
    const path = relative(desktopDir, file);
    if (!config.files.some((pattern) => matchesGlob(path, pattern))) continue;
    await mkdir(dirname(join(stage, path)), { recursive: true });
    await copyFile(file, join(stage, path));
  }
  asar = join(work, 'app.asar');
  await createPackage(stage, asar);
});
afterAll(() => rm(work, { recursive: true, force: true }));

/** The modules a CommonJS bundle requires. */
function requires(source: string): string[] {
  return [...new Set([...source.matchAll(/\brequire\((["'])([^"']+)\1\)/g)].map((m) => m[2]))].sort();
}

describe('the packed app', () => {
  it("has a configuration electron-builder's own schema accepts", async () => {
    await expect(validateConfiguration(config as never, new DebugLogger(false))).resolves.toBeUndefined();
    // And the schema is not one that takes anything: a misspelt fuse is refused.
    await expect(
      validateConfiguration({ ...config, electronFuses: { runAsNodee: true } } as never, new DebugLogger(false)),
    ).rejects.toThrow(/electronFuses/);
  });

  it('holds the bundles, the manifest and the icons, and no sources, maps or tests', async () => {
    const files = listPackage(asar, { isPack: false }).map((p) => p.replace(/\\/g, '/'));
    expect(files.sort()).toEqual([
      '/build',
      '/build/icon.png',
      '/build/tray.png',
      '/dist',
      '/dist/main.cjs',
      '/dist/preload-connections.cjs',
      '/dist/preload.cjs',
      '/package.json',
      '/static',
      '/static/connections.css',
      '/static/connections.html',
      '/static/connections.js',
    ]);
    const manifest = JSON.parse(extractFile(asar, 'package.json').toString());
    expect(manifest).toMatchObject({ main: 'dist/main.cjs', productName: 'runner' });
    expect((await stat(asar)).size).toBeLessThan(400_000);
  });

  it('needs nothing at run time but Electron and Node built-ins; the preload needs only electron', () => {
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    const main = requires(extractFile(asar, 'dist/main.cjs').toString());
    expect(main).toContain('electron');
    expect(main.filter((m) => m !== 'electron' && !builtins.has(m))).toEqual([]);
    // A sandboxed preload can require only a few modules; this one asks for electron alone.
    expect(requires(extractFile(asar, 'dist/preload.cjs').toString())).toEqual(['electron']);
    expect(requires(extractFile(asar, 'dist/preload-connections.cjs').toString())).toEqual(['electron']);
  });
});
