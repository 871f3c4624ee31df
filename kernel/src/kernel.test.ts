import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createRedactor,
  createServiceRef,
  definePlugin,
  RedactorRef,
  type Plugin,
  type Profile,
} from '@runner/plugin-sdk';
import { staticConfig } from '@runner/plugin-sdk/testing';
import { bootKernel, secretParts } from './kernel.js';
import type { DiscoveredPlugin } from './plugin-discovery.js';
import { PluginStopError } from './errors.js';

const base = { version: '1.0.0', description: 'test' };
const Greeting = createServiceRef<{ greet(): string }>({ id: 'greeting' });

function quietLogger(lines: string[] = []) {
  const logger = {
    debug: () => {},
    info: () => {},
    warn: (m: string) => void lines.push(`warn ${m}`),
    error: (m: string) => void lines.push(`error ${m}`),
    child: () => logger,
  };
  return logger;
}

function boot(
  plugins: Plugin[],
  options: { profile?: Profile; config?: Record<string, unknown>; lines?: string[] } = {},
) {
  const discovered: DiscoveredPlugin[] = plugins.map((plugin) => ({
    plugin,
    descriptor: {
      id: plugin.id,
      version: plugin.version,
      description: plugin.description,
      source: '(test)',
      origin: 'builtin',
    },
  }));
  return bootKernel({
    profile: options.profile ?? 'embedded',
    plugins: discovered,
    config: staticConfig(options.config ?? {}, mkdtempSync(join(tmpdir(), 'runner-kernel-'))),
    logger: quietLogger(options.lines),
    kernelVersion: '0.1.0',
  });
}

describe('bootKernel', () => {
  it('sets plugins up in dependency order, hands each its typed dependencies and stops in reverse', async () => {
    const log: string[] = [];
    const provider = definePlugin({
      ...base,
      id: 'provider',
      provides: [Greeting],
      setup(ctx) {
        log.push('setup provider');
        ctx.provide(Greeting, { greet: () => 'hi' });
        return { stop: () => void log.push('stop provider') };
      },
    });
    const consumer = definePlugin({
      ...base,
      id: 'consumer',
      dependsOn: { greeting: Greeting },
      setup(ctx, { greeting }) {
        log.push(`setup consumer: ${greeting.greet()}`);
        ctx.onStop(() => void log.push('stop consumer'));
      },
    });
    const kernel = await boot([consumer, provider]);
    expect(kernel.get(Greeting).greet()).toBe('hi');
    await kernel.stop();
    expect(log).toEqual(['setup provider', 'setup consumer: hi', 'stop consumer', 'stop provider']);
  });

  it('loads only the plugins of the profile', async () => {
    const masterOnly = definePlugin({
      ...base,
      id: 'master-only',
      profiles: ['master'],
      provides: [Greeting],
      setup: (ctx) => ctx.provide(Greeting, { greet: () => 'm' }),
    });
    const kernel = await boot([masterOnly], { profile: 'agent' });
    expect(kernel.find(Greeting)).toBeUndefined();
    expect(() => kernel.get(Greeting)).toThrow('service "greeting" is not provided by any plugin of this profile');
    await kernel.stop();
  });

  it('fails a setup that exceeds its deadline, naming the plugin, and stops what was set up', async () => {
    const stopped: string[] = [];
    const first = definePlugin({ ...base, id: 'first', setup: () => ({ stop: () => void stopped.push('first') }) });
    const slow = definePlugin({ ...base, id: 'slow', setupTimeoutMs: 50, setup: () => new Promise<void>(() => {}) });
    await expect(boot([first, slow])).rejects.toThrow('plugin slow: setup did not finish within 50 ms');
    expect(stopped).toEqual(['first']);
  });

  it('names the plugin whose setup threw', async () => {
    const broken = definePlugin({
      ...base,
      id: 'broken',
      setup: () => {
        throw new Error('no config for you');
      },
    });
    await expect(boot([broken])).rejects.toMatchObject({
      code: 'plugin_setup_failed',
      message: 'plugin broken: setup failed: no config for you',
      pluginId: 'broken',
    });
  });

  it('refuses a declared service that setup did not provide, and an undeclared one', async () => {
    const forgetful = definePlugin({ ...base, id: 'forgetful', provides: [Greeting] });
    await expect(boot([forgetful])).rejects.toThrow(
      'plugin forgetful: declared service "greeting" in provides but did not provide it in setup',
    );
    const sneaky = definePlugin({ ...base, id: 'sneaky', setup: (ctx) => ctx.provide(Greeting, { greet: () => '' }) });
    await expect(boot([sneaky])).rejects.toThrow(
      'plugin sneaky: provides service "greeting" without declaring it in provides',
    );
  });

  it('awaits every stop even when one fails, and reports each failure by plugin', async () => {
    const stopped: string[] = [];
    const a = definePlugin({ ...base, id: 'a', setup: () => ({ stop: () => void stopped.push('a') }) });
    const b = definePlugin({
      ...base,
      id: 'b',
      setup: () => ({
        stop: () => {
          throw new Error('disk gone');
        },
      }),
    });
    const c = definePlugin({ ...base, id: 'c', setup: () => ({ stop: async () => void stopped.push('c') }) });
    const kernel = await boot([a, b, c]);
    const error = await kernel.stop().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginStopError);
    expect((error as Error).message).toBe('plugin b: stop failed: disk gone');
    expect(stopped).toEqual(['c', 'a']);
    // Idempotent: a second stop returns the same outcome without stopping twice.
    await expect(kernel.stop()).rejects.toBe(error);
    expect(stopped).toEqual(['c', 'a']);
  });

  it('bounds a stop that hangs and names it', async () => {
    const hang = definePlugin({ ...base, id: 'hang', setup: () => ({ stop: () => new Promise<void>(() => {}) }) });
    const kernel = await boot([hang], { config: { kernel: { stop_timeout: 0.05 } } });
    await expect(kernel.stop()).rejects.toThrow('plugin hang: stop failed: did not finish within 50 ms');
  });

  it('names plugin and lifecycle stage when a tap fails', async () => {
    const tapper = definePlugin({
      ...base,
      id: 'tapper',
      setup(ctx) {
        ctx.lifecycle.ready.tapPromise('anything', async () => {
          throw new Error('port taken');
        });
      },
    });
    await expect(boot([tapper])).rejects.toMatchObject({
      code: 'lifecycle_tap_failed',
      stage: 'ready',
      message: 'plugin tapper: lifecycle stage ready failed: port taken',
    });
  });

  it('delivers events in order, logs a throwing subscriber by plugin and keeps delivering', async () => {
    const seen: string[] = [];
    const lines: string[] = [];
    const noisy = definePlugin({
      ...base,
      id: 'noisy',
      setup(ctx) {
        ctx.events.on('agent.connected', () => {
          throw new Error('boom');
        });
      },
    });
    const listener = definePlugin({
      ...base,
      id: 'listener',
      setup(ctx) {
        ctx.events.onAny((e) => void seen.push(e.type));
      },
    });
    const kernel = await boot([noisy, listener], { lines });
    kernel.events.emit('agent.connected', { agent_name: 'web-1', address: '127.0.0.1:1', status: 'online' });
    expect(seen).toContain('agent.connected');
    expect(lines).toContain('error plugin noisy: subscriber of agent.connected failed');
    await kernel.stop();
    expect(seen.at(-1)).toBe('kernel.stopping');
  });
});

describe('secret config values', () => {
  const redactor = createRedactor();
  it("masks the kernel's own secret keys (an agent's join token given as a flag), as a plugin's", async () => {
    const kernel = await boot([], { config: { 'agent.join_token': 'rjt_flag-given-join-token' } });
    try {
      expect(kernel.get(RedactorRef).redact('token rjt_flag-given-join-token')).not.toContain(
        'rjt_flag-given-join-token',
      );
    } finally {
      await kernel.stop();
    }
  });

  it("masks a URL's password and secret query values, keeping its address readable", () => {
    expect(
      secretParts('postgres://runner:p%40ss-word@db:5432/runner?sslpassword=key-pass&sslmode=require', redactor),
    ).toEqual(['p%40ss-word', 'p@ss-word', 'key-pass']);
    expect(secretParts('postgres://runner@db:5432/runner', redactor)).toEqual([]);
    expect(secretParts('a-plain-secret-value', redactor)).toEqual(['a-plain-secret-value']);
  });
});
