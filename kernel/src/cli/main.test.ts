import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from './main.js';

const repo = resolve(import.meta.dirname, '../../..');
const greeterDir = join(repo, 'test/fixtures/external-plugins');
let builtinDir: string;

beforeAll(() => {
  // Only the cli-tools plugin, so these tests do not depend on every other plugin's state.
  builtinDir = mkdtempSync(join(tmpdir(), 'runner-cli-builtin-'));
  symlinkSync(join(repo, 'plugins/cli-tools'), join(builtinDir, 'cli-tools'));
});

async function run(argv: string[], env: Record<string, string> = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += d));
  stderr.on('data', (d) => (err += d));
  const dataDir = env.RUNNER_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'runner-cli-data-'));
  const code = await main(argv, {
    stdout,
    stderr,
    stdin: new PassThrough(),
    env: { RUNNER_BUILTIN_PLUGINS_DIR: builtinDir, RUNNER_DATA_DIR: dataDir, ...env },
  });
  return { code, out, err };
}

describe('runner CLI', () => {
  it('lists the commands plugins contribute', async () => {
    const { code, out } = await run(['--help']);
    expect(code).toBe(0);
    expect(out).toMatch(/Commands:[\s\S]*completion[\s\S]*doctor[\s\S]*modules/);
  });

  it('answers --version and --help on every command', async () => {
    for (const argv of [['--version'], ['modules', '--version'], ['modules', 'list', '--version'], ['doctor', '-V']]) {
      const { code, out } = await run(argv);
      expect({ argv, code, out }).toEqual({ argv, code: 0, out: '0.1.0\n' });
    }
    const { code, out } = await run(['modules', 'info', '--help']);
    expect(code).toBe(0);
    expect(out).toContain('Usage: runner modules info [options] <name>');
  });

  it('prints help for runner alone', async () => {
    const { code, out } = await run([]);
    expect(code).toBe(0);
    expect(out).toContain('Usage: runner [options] [command]');
  });

  it('gives usage errors one line and exit code 2', async () => {
    const unknown = await run(['bogus']);
    expect(unknown.code).toBe(2);
    expect(unknown.err.split('\n')[0]).toBe("runner: unknown command 'bogus'");
    const badChoice = await run(['completion', 'powershell']);
    expect(badChoice.code).toBe(2);
    expect(badChoice.err).toBe(
      "runner: command-argument value 'powershell' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.\n",
    );
  });

  it('prints a failing command as one line, with the stack only under --debug', async () => {
    const plain = await run(['modules', 'info', 'nope']);
    expect(plain.code).toBe(1);
    expect(plain.err).toBe('runner: unknown module "nope" (installed: none)\n');
    const debug = await run(['modules', 'info', 'nope', '--debug']);
    expect(debug.code).toBe(1);
    expect(debug.err).toMatch(
      /^runner: unknown module "nope" \(installed: none\)\nNotFoundError: unknown module "nope"[\s\S]*\n\s+at /,
    );
  });

  it('loads an external plugin from --plugins-dir: its command and its Lua module declaration', async () => {
    const greet = await run(['--plugins-dir', greeterDir, 'greet', 'ops']);
    expect(greet).toMatchObject({ code: 0, out: 'hello, ops\n' });
    const list = await run(['modules', 'list', '--plugins-dir', greeterDir]);
    expect(list.out).toMatch(
      /^MODULE\s+PLUGIN\s+VERSION\s+FUNCTIONS\s+DESCRIPTION\ngreeter\s+greeter\s+1\.2\.3\s+2\s+Greets people/,
    );
    const info = await run(['modules', 'info', 'greeter', '--plugins-dir', greeterDir]);
    expect(info.out).toContain('greeter.hello(name: string) -> string');
    expect(info.out).toContain('plugin greeter 1.2.3 (external,');
    const fromEnv = await run(['greet', 'env'], { RUNNER_PLUGINS_DIR: greeterDir });
    expect(fromEnv.out).toBe('hello, env\n');
  });

  it('refuses to run with a broken config file, except doctor, which reports it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'runner-cli-data-'));
    writeFileSync(join(dataDir, 'config.yaml'), 'http:\n  port: [8080\n');
    const list = await run(['modules', 'list'], { RUNNER_DATA_DIR: dataDir });
    expect(list.code).toBe(2);
    expect(list.err).toMatch(new RegExp(`^runner: ${join(dataDir, 'config.yaml')}:\\d+:\\d+: `));
    const doctor = await run(['doctor', '--output', 'json'], { RUNNER_DATA_DIR: dataDir });
    expect(doctor.code).toBe(1);
    const checks = JSON.parse(doctor.out).checks as { name: string; status: string; detail: string; fix?: string }[];
    expect(checks.find((c) => c.name === 'config')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('correct'),
    });
    expect(checks.find((c) => c.name === 'node')).toMatchObject({ status: 'ok', detail: `v${process.versions.node}` });
  });

  it('doctor names an unreachable RUNNER_MASTER_ADDR with a fix', async () => {
    const { code, out } = await run(['doctor', '--output', 'json'], { RUNNER_MASTER_ADDR: '127.0.0.1:1' });
    expect(code).toBe(1);
    const master = (JSON.parse(out).checks as { name: string }[]).find((c) => c.name === 'master');
    expect(master).toMatchObject({
      status: 'fail',
      detail: '127.0.0.1:1 (from env RUNNER_MASTER_ADDR) does not accept connections',
      fix: expect.stringContaining('RUNNER_MASTER_ADDR'),
    });
  });

  it('doctor reports an unwritable data directory', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'runner-cli-ro-'));
    const file = join(parent, 'file');
    writeFileSync(file, '');
    mkdirSync(join(parent, 'ok'));
    const { out } = await run(['doctor', '--output', 'json'], { RUNNER_DATA_DIR: join(file, 'data') });
    const check = (JSON.parse(out).checks as { name: string }[]).find((c) => c.name === 'data directory');
    expect(check).toMatchObject({ status: 'fail', fix: expect.stringContaining('--data-dir') });
  });
});
