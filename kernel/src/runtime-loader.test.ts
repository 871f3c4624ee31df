import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { kernelDir } from './paths.js';

// These check the build (npm run build): kernel/dist/runtime.cjs and the entries that re-export it.
const root = join(kernelDir, '..');
const loader = createRequire(import.meta.url)(join(kernelDir, 'dist', 'runtime-loader.cjs')) as {
  runtimeModule(source: string): Record<string, unknown>;
  runtimeModuleOfFile(file: string): Record<string, unknown> | undefined;
};
const importDist = (file: string) => import(pathToFileURL(join(root, file)).href) as Promise<Record<string, unknown>>;

describe('the built runtime', () => {
  it("is what every entry's dist file exports: one module, one SDK instance", async () => {
    const sdk = await importDist('plugin-sdk/dist/index.js');
    expect(typeof sdk.definePlugin).toBe('function');
    expect(loader.runtimeModule('plugin-sdk/index.ts').definePlugin).toBe(sdk.definePlugin);
    const engine = await importDist('plugins/engine/dist/index.js');
    expect(loader.runtimeModuleOfFile(join(root, 'plugins/engine/dist/index.js'))?.plugin).toBe(engine.plugin);
    // A plugin outside the build is not the runtime's: the discovery imports it.
    expect(loader.runtimeModuleOfFile(join(tmpdir(), 'elsewhere', 'dist', 'index.js'))).toBeUndefined();
    expect(() => loader.runtimeModule('plugins/nothing/index.ts')).toThrow(/not in kernel\/dist\/runtime.cjs/);
  });

  it('keeps a code cache per kind of command, written by the first and used by the next', () => {
    // A copy of the kernel alone (no plugins): the cache files land in the copy.
    const kernel = join(mkdtempSync(join(tmpdir(), 'runtime-loader-')), 'kernel');
    mkdirSync(kernel);
    for (const part of ['package.json', 'bin', 'dist']) {
      cpSync(join(kernelDir, part), join(kernel, part), { recursive: true, filter: (f) => !f.endsWith('.v8-cache') });
    }
    symlinkSync(join(root, 'node_modules'), join(kernel, 'node_modules'));
    const caches = () => readdirSync(join(kernel, 'dist')).filter((f) => /^runtime\.cjs\..*\.v8-cache$/.test(f));
    const runner = (...args: string[]) =>
      spawnSync(process.execPath, [join(kernel, 'bin', 'runner.js'), ...args], {
        encoding: 'utf8',
        env: { ...process.env, RUNNER_DATA_DIR: join(kernel, '..', 'data') },
      });
    expect(runner('--help').stdout).toContain('Usage: runner');
    const help = caches();
    expect(help).toEqual([expect.stringMatching(/\.help\.[0-9a-f]{16}\.v8-cache$/)]);
    const written = statSync(join(kernel, 'dist', help[0])).mtimeMs;
    expect(runner('--help').stdout).toContain('Usage: runner');
    // Used, so not written again.
    expect(statSync(join(kernel, 'dist', help[0])).mtimeMs).toBe(written);
    // Any other command (here a usage error: this copy has no plugins, so no commands).
    expect(runner('nothing').status).toBe(2);
    expect(caches().sort()).toEqual([expect.stringMatching(/\.cli\.[0-9a-f]{16}\.v8-cache$/), help[0]]);
  });
});
