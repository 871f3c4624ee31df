import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { CommandContext, CommandSpec, RunningKernel } from '@runner/plugin-sdk';
import { createTestKernel } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { serverCommand, uiCommand } from './commands.js';
import { plugin } from './plugin.js';

/**
 * Runs a command against a real HTTP plugin in a test kernel. `stopOnSignal` resolves at once,
 * as if Ctrl-C came right after start-up.
 */
async function runCommand(spec: CommandSpec, options: Record<string, unknown>) {
  const stdout = new PassThrough();
  let output = '';
  stdout.on('data', (c: Buffer) => (output += c.toString()));
  const boots: { profile: string; overrides: Record<string, unknown> | undefined }[] = [];
  let healthStatus = 0;
  const ctx = {
    // A data directory no master holds: `runner ui` first looks for one already serving it.
    config: { dataDir: mkdtempSync(join(tmpdir(), 'runner-http-cmd-')) },
    stdout,
    stderr: new PassThrough(),
    async boot(profile: string, overrides?: Record<string, unknown>): Promise<RunningKernel> {
      boots.push({ profile, overrides });
      const kernel = await createTestKernel({
        plugins: [plugin],
        profile: 'master',
        config: { 'http.bind_address': '127.0.0.1', 'http.port': 0, ...overrides },
      });
      await kernel.ready();
      return {
        profile,
        events: kernel.events,
        config: kernel.config,
        logger: {
          debug() {},
          info() {},
          warn() {},
          error() {},
          child() {
            return this;
          },
        },
        get: (ref) => kernel.get(ref),
        find: (ref) => kernel.get(ref),
        stop: () => kernel.stop(),
        async stopOnSignal() {
          const port = /listening on 127\.0\.0\.1:(\d+)/.exec(output)?.[1];
          healthStatus = (await fetch(`http://127.0.0.1:${port}/api/v1/health`)).status;
          await kernel.stop();
        },
      };
    },
  } as unknown as CommandContext;
  const code = await spec.run?.({ args: [], options }, ctx);
  return { code, output, boots, healthStatus };
}

function parseOption(spec: CommandSpec, flag: string, value: string): unknown {
  const option = spec.options?.find((o) => o.flags.startsWith(flag));
  if (!option?.parse) throw new Error(`${flag} has no parser`);
  return option.parse(value, undefined);
}

describe('runner server', () => {
  it('boots the master with the flags as config overrides and says where the API listens', async () => {
    // The gRPC flags (--port, ...) are the agent-transport plugin's command options, and --tls-*
    // name config keys (http.tls_*): the kernel turns both into config overrides
    // (kernel/src/cli/main.test.ts), not this command.
    const { code, output, boots, healthStatus } = await runCommand(serverCommand, { httpPort: 0 });
    expect(code).toBe(0);
    expect(boots).toEqual([{ profile: 'master', overrides: { 'http.port': 0 } }]);
    expect(output).toMatch(
      /^runner master \(pid \d+\): REST API listening on 127\.0\.0\.1:\d+ \(http:\/\/127\.0\.0\.1:\d+\/api\/v1\); Ctrl-C stops it\n$/,
    );
    expect(healthStatus).toBe(200);
  });

  it('leaves out flags that were not given', async () => {
    const { boots } = await runCommand(serverCommand, {});
    expect(boots[0].overrides).toEqual({});
  });

  it('refuses a port that is not one', () => {
    expect(parseOption(serverCommand, '--http-port', '8081')).toBe(8081);
    expect(() => parseOption(serverCommand, '--http-port', '80a')).toThrow(
      '--http-port: "80a" is not a port number (0-65535)',
    );
  });
});

describe('runner ui', () => {
  it('maps --port to the HTTP port and says where the web interface is served', async () => {
    const { output, boots } = await runCommand(uiCommand, { port: 0, bindAddress: '127.0.0.1' });
    expect(boots[0].overrides).toEqual({ 'http.port': 0, 'http.bind_address': '127.0.0.1' });
    expect(output).toContain('web interface and REST API listening on 127.0.0.1:');
  });

  it('takes its port, bind address, --insecure and TLS (the auth plugin adds --auth, --username, --password-file)', () => {
    expect(uiCommand.options?.map((o) => o.flags.split(' ')[0])).toEqual([
      '--port',
      '--bind-address',
      '--insecure',
      '--tls-cert',
      '--tls-key',
    ]);
    // The same two declarations on both master commands, each naming its config key.
    const tls = (spec: CommandSpec) => spec.options?.filter((o) => o.flags.startsWith('--tls-'));
    expect(tls(uiCommand)).toEqual(tls(serverCommand));
    expect(tls(serverCommand)?.map((o) => o.configKey)).toEqual(['http.tls_cert', 'http.tls_key']);
  });
});
