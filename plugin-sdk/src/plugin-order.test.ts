import { describe, expect, it } from 'vitest';
import { orderPlugins } from './plugin-order.js';
import { definePlugin } from './plugin.js';
import { createServiceRef, optional } from './service-ref.js';

const A = createServiceRef<string>({ id: 'a' });
const B = createServiceRef<string>({ id: 'b' });
const C = createServiceRef<string>({ id: 'c' });
const base = { version: '1.0.0', description: 'test' };

describe('orderPlugins', () => {
  it('orders providers before their dependents, whatever the discovery order', () => {
    const top = definePlugin({ ...base, id: 'top', dependsOn: { b: B } });
    const mid = definePlugin({ ...base, id: 'mid', dependsOn: { a: A }, provides: [B] });
    const low = definePlugin({ ...base, id: 'low', provides: [A] });
    expect(orderPlugins([top, mid, low], '0.1.0').map((p) => p.id)).toEqual(['low', 'mid', 'top']);
  });

  it('refuses a cycle and prints it', () => {
    const x = definePlugin({ ...base, id: 'x', dependsOn: { b: B }, provides: [A] });
    const y = definePlugin({ ...base, id: 'y', dependsOn: { c: C }, provides: [B] });
    const z = definePlugin({ ...base, id: 'z', dependsOn: { a: A }, provides: [C] });
    expect(() => orderPlugins([x, y, z], '0.1.0')).toThrow('circular plugin dependency: x -> y -> z -> x');
  });

  it('refuses a missing service, naming the plugin, the service and the key', () => {
    const lonely = definePlugin({ ...base, id: 'lonely', dependsOn: { store: A } });
    expect(() => orderPlugins([lonely], '0.1.0')).toThrow(
      'plugin lonely depends on service "a" (as store), which no loaded plugin provides',
    );
  });

  it('accepts a missing optional service', () => {
    const relaxed = definePlugin({ ...base, id: 'relaxed', dependsOn: { store: optional(A) } });
    expect(orderPlugins([relaxed], '0.1.0').map((p) => p.id)).toEqual(['relaxed']);
  });

  it('refuses two providers of one service', () => {
    const one = definePlugin({ ...base, id: 'one', provides: [A] });
    const two = definePlugin({ ...base, id: 'two', provides: [A] });
    expect(() => orderPlugins([one, two], '0.1.0')).toThrow(
      'service "a" is provided by both plugin one and plugin two',
    );
  });

  it('refuses a plugin built for another kernel version', () => {
    const old = definePlugin({ ...base, id: 'old', kernel: '^2.0.0' });
    expect(() => orderPlugins([old], '0.1.0')).toThrow('plugin old requires kernel ^2.0.0, but this kernel is 0.1.0');
  });
});
