import { describe, expect, it } from 'vitest';
import { EventHub } from './event-bus.js';
import type { BusEvent } from './events.js';
import type { Logger } from './logger.js';
import { createRedactor, REDACTED } from './redactor.js';

function collectingLogger(lines: string[]): Logger {
  const logger: Logger = {
    debug: (m) => void lines.push(`debug ${m}`),
    info: (m) => void lines.push(`info ${m}`),
    warn: (m) => void lines.push(`warn ${m}`),
    error: (m, f) => void lines.push(`error ${m} ${String(f?.error)}`),
    child: () => logger,
  };
  return logger;
}

describe('EventHub', () => {
  it('gives every event a unique id sorting in emission order and a millisecond timestamp', () => {
    const seen: BusEvent[] = [];
    const hub = new EventHub({ logger: collectingLogger([]), onEmit: (e) => seen.push(e) });
    const bus = hub.forPlugin('p');
    const before = Date.now();
    for (let i = 0; i < 500; i++) bus.emit('kernel.ready', { profile: 'master', plugins: [] });
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(500);
    expect([...ids].sort()).toEqual(ids);
    for (const e of seen) {
      expect(Number.isInteger(e.timestamp)).toBe(true);
      expect(e.timestamp).toBeGreaterThanOrEqual(before);
    }
  });

  it('isolates a throwing and a rejecting subscriber from the others and the emitter', async () => {
    const lines: string[] = [];
    const hub = new EventHub({ logger: collectingLogger(lines) });
    const received: string[] = [];
    hub.forPlugin('thrower').onAny(() => {
      throw new Error('boom');
    });
    hub.forPlugin('rejecter').on('kernel.ready', () => Promise.reject(new Error('late boom')));
    hub.forPlugin('good').onAny((e) => void received.push(e.type));
    expect(() => hub.forPlugin('emitter').emit('kernel.ready', { profile: 'master', plugins: [] })).not.toThrow();
    expect(received).toEqual(['kernel.ready']);
    // The rejection is caught asynchronously: wait for the microtask that logs it.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(lines).toContain('error plugin thrower: subscriber of kernel.ready failed boom');
    expect(lines).toContain('error plugin rejecter: subscriber of kernel.ready failed late boom');
  });

  it('delivers synchronously: every subscriber has run when emit returns', () => {
    const hub = new EventHub({ logger: collectingLogger([]) });
    let count = 0;
    hub.forPlugin('a').onAny(() => void count++);
    hub.forPlugin('b').on('kernel.ready', () => void count++);
    hub.forPlugin('c').emit('kernel.ready', { profile: 'master', plugins: [] });
    expect(count).toBe(2);
  });

  it('redacts event data before any subscriber sees it', () => {
    const redactor = createRedactor();
    redactor.addSecret('bus-secret-value');
    const hub = new EventHub({ logger: collectingLogger([]), redactor });
    const seen: unknown[] = [];
    hub.forPlugin('ws').onAny((e) => void seen.push(e.data));
    hub.forPlugin('engine').emit('kernel.stopping', { profile: 'master', reason: 'stop bus-secret-value now' });
    expect(seen).toEqual([{ profile: 'master', reason: `stop ${REDACTED} now` }]);
  });

  it('lets a subscriber unsubscribe during delivery without skipping its neighbour', () => {
    const hub = new EventHub({ logger: collectingLogger([]) });
    const order: string[] = [];
    const off = hub.forPlugin('a').onAny(() => {
      order.push('a');
      off();
    });
    hub.forPlugin('b').onAny(() => void order.push('b'));
    const bus = hub.forPlugin('c');
    bus.emit('kernel.ready', { profile: 'master', plugins: [] });
    bus.emit('kernel.ready', { profile: 'master', plugins: [] });
    expect(order).toEqual(['a', 'b', 'b']);
  });
});
