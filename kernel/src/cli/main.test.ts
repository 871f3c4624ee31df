import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { main, withNearSuggestion } from './main.js';

const repo = resolve(import.meta.dirname, '../../..');
const greeterDir = join(repo, 'test/fixtures/external-plugins');
let builtinDir: string;
let extensionDir: string;

/**
 * A plugin package in plain JavaScript, outside the repository: `definePlugin` only brands the
 * object (Symbol.for, so any SDK copy recognises it), which lets it need no import at all.
 */
function writePlugin(dir: string, name: string, body: string): void {
  mkdirSync(join(dir, name));
  writeFileSync(join(dir, name, 'package.json'), JSON.stringify({ name, type: 'module', runner: { plugin: true } }));
  writeFileSync(
    join(dir, name, 'index.js'),
    `export const plugin = Object.freeze({ [Symbol.for('runner.plugin')]: true, id: '${name}', version: '1.0.0', description: '${name}', ${body} });\n`,
  );
}

beforeAll(() => {
  // Only the cli-tools plugin, so these tests do not depend on every other plugin's state.
  builtinDir = mkdtempSync(join(tmpdir(), 'runner-cli-builtin-'));
  symlinkSync(join(repo, 'plugins/cli-tools'), join(builtinDir, 'cli-tools'));
  // "owner" contributes `runner serve`; "listener" declares listener.* keys and adds --port to it.
  extensionDir = mkdtempSync(join(tmpdir(), 'runner-cli-ext-'));
  writePlugin(
    extensionDir,
    'owner',
    `commands: [{ name: 'serve', description: 'serve', run: (_i, ctx) => { ctx.stdout.write(ctx.config.get('listener.port') + ' from ' + ctx.config.sourceOf('listener.port') + '\\n'); } }]`,
  );
  writePlugin(
    extensionDir,
    'listener',
    `config: {
      'listener.port': { schema: { type: 'integer', minimum: 0, maximum: 65535 }, default: 7000, help: 'port to listen on' },
      'listener.password': { schema: { type: 'string' }, help: 'password of the listener', secret: true },
      'listener.api_token': { schema: { type: 'string' }, help: 'named like a secret' },
    },
    commandOptions: [{ command: 'serve', options: [{ flags: '--port <n>', description: 'listener port', configKey: 'listener.port' }] }]`,
  );
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

  it('offers only a near command or option (did-you-mean relative to the word length)', async () => {
    expect((await run(['doctr'])).err).toBe("runner: unknown command 'doctr'\n(Did you mean doctor?)\n");
    // Commander would offer `serve` (three edits): too far for a word of six letters.
    const far = await run(['--plugins-dir', extensionDir, 'secrt']);
    expect(far).toMatchObject({ code: 2, err: "runner: unknown command 'secrt'\n" });
    // What a new user met: `events` is not `agent`, `secret` is not `server`; `agnet` is.
    expect(withNearSuggestion("unknown command 'events'\n(Did you mean agent?)\n")).toBe("unknown command 'events'\n");
    expect(withNearSuggestion("unknown command 'secret'\n(Did you mean server?)\n")).toBe("unknown command 'secret'\n");
    expect(withNearSuggestion("unknown command 'agnet'\n(Did you mean agent?)\n")).toContain('(Did you mean agent?)');
    expect(withNearSuggestion("unknown option '--dryrun'\n(Did you mean --dry-run?)\n")).toContain('--dry-run?');
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
    // Only cli-tools is installed here: no plugin dials a gRPC address, and doctor says so, naming
    // where the address came from (with agent-transport it dials it: test/e2e/agents.test.ts).
    expect(master).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('master.address (from env RUNNER_MASTER_ADDR): no plugin can ask a master'),
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

  it("adds another plugin's option to a command: in --help, and its value reaches the config key", async () => {
    const help = await run(['--plugins-dir', extensionDir, 'serve', '--help']);
    expect(help.out).toMatch(/--port <n>\s+listener port/);
    const completion = await run(['--plugins-dir', extensionDir, 'completion', 'fish']);
    expect(completion.out).toContain("complete -c runner -n '__runner_at '\\''/serve'\\''' -l 'port'");
    expect(await run(['--plugins-dir', extensionDir, 'serve', '--port', '7100'])).toMatchObject({
      code: 0,
      out: '7100 from command-line flag (listener.port)\n',
    });
    expect((await run(['--plugins-dir', extensionDir, 'serve'])).out).toBe('7000 from default\n');
    const bad = await run(['--plugins-dir', extensionDir, 'serve', '--port', 'seventy']);
    expect(bad).toMatchObject({
      code: 2,
      err: 'runner: config listener.port (from command-line flag (listener.port)): expected an integer from 0 to 65535, got "seventy"\n',
    });
  });

  it('refuses two plugins declaring the same option on one command, naming both', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-cli-dup-'));
    writePlugin(
      dir,
      'rival',
      `commandOptions: [{ command: 'serve', options: [{ flags: '-p, --port <n>', description: 'mine' }] }]`,
    );
    const { code, err } = await run(['--plugins-dir', extensionDir, '--plugins-dir', dir, 'serve']);
    expect(code).toBe(1);
    expect(err).toBe('runner: option --port of "runner serve" is declared by both plugin listener and plugin rival\n');
  });

  it('config show prints each key with value, source and help, secrets redacted', async () => {
    const env = { RUNNER_LISTENER_PASSWORD: 'hunter22', RUNNER_LISTENER_API_TOKEN: 'tok-123456' };
    const table = await run(['--plugins-dir', extensionDir, 'config', 'show'], env);
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/^KEY\s+VALUE\s+SOURCE\s+HELP\n/);
    expect(table.out).toMatch(/\nlistener\.port\s+7000\s+default\s+port to listen on\n/);
    expect(table.out).toMatch(/\nlistener\.password\s+\*\*\*\s+env RUNNER_LISTENER_PASSWORD\s+password/);
    expect(table.out).not.toContain('hunter22');
    expect(table.out).not.toContain('tok-123456');
    const json = await run(['--plugins-dir', extensionDir, 'config', 'show', '--output', 'json'], env);
    const rows = JSON.parse(json.out) as { key: string }[];
    expect(rows.find((r) => r.key === 'listener.api_token')).toEqual({
      key: 'listener.api_token',
      value: '***',
      source: 'env RUNNER_LISTENER_API_TOKEN',
      plugin: 'listener',
      help: 'named like a secret',
      secret: true,
    });
    expect(rows.find((r) => r.key === 'kernel.setup_timeout')).toMatchObject({ value: 10, plugin: 'kernel' });
  });

  it('doctor reports each config problem with a fix; other commands refuse them with exit 2', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'runner-cli-data-'));
    writeFileSync(join(dataDir, 'config.yaml'), 'listener:\n  prot: 1\n  port: high\nlistnr:\n  port: 2\n');
    const env = { RUNNER_DATA_DIR: dataDir };
    const serve = await run(['--plugins-dir', extensionDir, 'serve'], env);
    expect(serve.code).toBe(2);
    expect(serve.err).toContain(
      `unknown config key listener.prot (from ${join(dataDir, 'config.yaml')}); did you mean listener.port?`,
    );
    const doctor = await run(['--plugins-dir', extensionDir, 'doctor', '--output', 'json'], env);
    const config = (JSON.parse(doctor.out).checks as { name: string }[]).filter((c) => c.name === 'config');
    expect(config).toEqual([
      {
        name: 'config',
        status: 'fail',
        detail: `unknown config key listener.prot (from ${join(dataDir, 'config.yaml')}); did you mean listener.port?`,
        fix: `rename the key to listener.port in ${join(dataDir, 'config.yaml')}`,
      },
      {
        name: 'config',
        status: 'fail',
        detail: `config listener.port (from ${join(dataDir, 'config.yaml')}): expected an integer from 0 to 65535, got "high"`,
        fix: `correct listener.port in ${join(dataDir, 'config.yaml')} (\`runner config show\` gives each key's type and help)`,
      },
    ]);
    writeFileSync(join(dataDir, 'config.yaml'), 'listnr:\n  port: 2\n');
    const warned = await run(['--plugins-dir', extensionDir, 'serve'], env);
    expect(warned).toMatchObject({ code: 0, out: '7000 from default\n' });
    expect(warned.err).toBe(
      `runner: warning: unknown config key listnr.port (from ${join(dataDir, 'config.yaml')}); did you mean listener.port? (no loaded plugin reads section listnr; ignored)\n`,
    );
  });
});
