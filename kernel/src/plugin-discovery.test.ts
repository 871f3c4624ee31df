import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverPlugins } from './plugin-discovery.js';

/** Writes a plugin package whose entry is plain JavaScript (the brand is Symbol.for, no SDK import). */
function writePlugin(dir: string, id: string, body?: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: id, type: 'module', main: 'index.js', runner: { plugin: true } }),
  );
  writeFileSync(
    join(dir, 'index.js'),
    body ??
      `export const plugin = Object.freeze({ id: '${id}', version: '1.0.0', description: '${id} plugin', [Symbol.for('runner.plugin')]: true });\n`,
  );
  return dir;
}

const temp = () => mkdtempSync(join(tmpdir(), 'runner-discovery-'));

describe('discoverPlugins', () => {
  it('finds the built-in plugins and those of extra directories, one package or several', async () => {
    const builtin = temp();
    writePlugin(join(builtin, 'alpha'), 'alpha');
    mkdirSync(join(builtin, 'not-a-plugin'));
    const extraMany = temp();
    writePlugin(join(extraMany, 'beta'), 'beta');
    const extraOne = writePlugin(join(temp(), 'gamma'), 'gamma');
    const found = await discoverPlugins({ builtinDir: builtin, extraDirs: [extraMany, extraOne] });
    expect(found.map((f) => [f.plugin.id, f.descriptor.origin])).toEqual([
      ['alpha', 'builtin'],
      ['beta', 'external'],
      ['gamma', 'external'],
    ]);
  });

  it('refuses a duplicate id, naming both places', async () => {
    const builtin = temp();
    writePlugin(join(builtin, 'alpha'), 'alpha');
    const extra = temp();
    writePlugin(join(extra, 'alpha-copy'), 'alpha');
    await expect(discoverPlugins({ builtinDir: builtin, extraDirs: [extra] })).rejects.toThrow(
      `plugin id "alpha" is declared twice: in ${join(builtin, 'alpha')} and in ${join(extra, 'alpha-copy')}`,
    );
  });

  it('names a missing extra directory', async () => {
    await expect(discoverPlugins({ builtinDir: temp(), extraDirs: ['/nonexistent/plugins'] })).rejects.toThrow(
      'plugins directory /nonexistent/plugins does not exist or is not a directory',
    );
  });

  it('names a package that exports no plugin, and one that fails to import', async () => {
    const dir = temp();
    writePlugin(join(dir, 'empty'), 'empty', 'export const nothing = 1;\n');
    await expect(discoverPlugins({ builtinDir: dir })).rejects.toThrow(
      `${join(dir, 'empty', 'index.js')} exports no plugin (export the result of definePlugin)`,
    );
    const bad = temp();
    writePlugin(join(bad, 'broken'), 'broken', 'throw new Error("cannot load me");\n');
    await expect(discoverPlugins({ builtinDir: bad })).rejects.toThrow(
      `plugin package ${join(bad, 'broken')}: importing ${join(bad, 'broken', 'index.js')} failed: cannot load me`,
    );
  });
});
