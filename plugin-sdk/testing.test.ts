import { describe, expect, it } from 'vitest';
import { definePlugin } from './src/plugin.js';
import { createServiceRef } from './src/service-ref.js';
import { createTestKernel, staticConfig } from './testing.js';

const Greeting = createServiceRef<string>({ id: 'test.greeting' });
const Shout = createServiceRef<string>({ id: 'test.shout' });

const greeter = definePlugin({
  id: 'greeter',
  version: '1.0.0',
  description: 'provides a greeting',
  provides: [Greeting],
  config: {
    'greeter.name': { schema: { type: 'string', minLength: 1 }, default: 'world', help: 'who' },
    'greeter.times': { schema: { type: 'integer', minimum: 1 }, default: 1, help: 'how often' },
  },
  setup(ctx) {
    const times = ctx.config.get<number>('greeter.times');
    ctx.provide(Greeting, `hello ${ctx.config.get<string>('greeter.name')}`.repeat(times));
  },
});

const shouter = definePlugin({
  id: 'shouter',
  version: '1.0.0',
  description: 'shouts the greeting',
  dependsOn: { greeting: Greeting },
  provides: [Shout],
  setup(ctx, { greeting }) {
    ctx.provide(Shout, greeting.toUpperCase());
  },
});

describe('createTestKernel', () => {
  it('sets plugins up in dependency order, as the kernel does, whatever order they are given in', async () => {
    const kernel = await createTestKernel({ plugins: [shouter, greeter] });
    expect(kernel.get(Shout)).toBe('HELLO WORLD');
    await kernel.stop();
  });

  it('checks and coerces config against the declarations, as the kernel does', async () => {
    const kernel = await createTestKernel({ plugins: [greeter], config: { greeter: { name: 'ops', times: '2' } } });
    expect(kernel.get(Greeting)).toBe('hello opshello ops');
    await expect(createTestKernel({ plugins: [greeter], config: { 'greeter.times': 0 } })).rejects.toThrow(
      'config greeter.times (from test): expected an integer of at least 1, got 0',
    );
    await expect(createTestKernel({ plugins: [greeter], config: { greeter: { nmae: 'x' } } })).rejects.toThrow(
      'unknown config key greeter.nmae (from test); did you mean greeter.name?',
    );
  });

  it('refuses a plugin whose dependency is neither loaded nor mocked, naming both', async () => {
    await expect(createTestKernel({ plugins: [shouter] })).rejects.toThrow(
      'plugin shouter depends on service "test.greeting" (as greeting), which no loaded plugin provides',
    );
    const kernel = await createTestKernel({ plugins: [shouter], services: [[Greeting, 'hi']] });
    expect(kernel.get(Shout)).toBe('HI');
  });
});

describe('staticConfig', () => {
  it('answers declared defaults and the SDK core keys', () => {
    const config = staticConfig({}, '/tmp/data', [greeter]);
    expect(config.get('greeter.name')).toBe('world');
    expect(config.get('kernel.setup_timeout')).toBe(10);
    expect(config.dataDir).toBe('/tmp/data');
  });
});
