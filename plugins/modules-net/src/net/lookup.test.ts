import { describe, expect, it } from 'vitest';
import { lookup } from './lookup.js';
import { callContext } from './test-support.js';

// Only names the machine answers itself (/etc/hosts, literals): the network beyond loopback is off limits.
describe('net.lookup', () => {
  it('resolves localhost to a loopback address', async () => {
    const { call } = callContext();
    const addresses = (await lookup(call, 'localhost', { family: 4 })) as string[];
    expect(addresses).toContain('127.0.0.1');
    expect(addresses.every((a) => a.startsWith('127.'))).toBe(true);
  });

  it('returns each address once', async () => {
    const { call } = callContext();
    const addresses = (await lookup(call, 'localhost', null)) as string[];
    expect(addresses.length).toBeGreaterThan(0);
    expect(new Set(addresses).size).toBe(addresses.length);
  });

  it('passes address literals through, filtered by family', async () => {
    const { call } = callContext();
    expect(await lookup(call, '::1', { family: 'ipv6' })).toEqual(['::1']);
    expect(await lookup(call, '127.0.0.1', { family: 'IPv4' })).toEqual(['127.0.0.1']);
  });

  it('stops waiting when the task is already cancelled', async () => {
    const controller = new AbortController();
    controller.abort(new Error('task timed out'));
    const { call } = callContext({ signal: controller.signal });
    await expect(lookup(call, 'localhost', null)).rejects.toThrow(
      'net.lookup: lookup of "localhost" was cancelled (task timed out)',
    );
  });

  it.each([
    [null, null, 'net.lookup: argument 1 must be a host name string, got nil'],
    ['', null, 'net.lookup: argument 1 must be a host name string, got string ""'],
    ['localhost', { family: 5 }, 'net.lookup: family must be 4, 6, "ipv4", "ipv6" or "any", got number 5'],
    ['localhost', 4, 'net.lookup: argument 2 must be a table of options, got number 4'],
  ])('rejects bad arguments (%j, %j)', async (name, opts, message) => {
    const { call } = callContext();
    await expect(lookup(call, name, opts as never)).rejects.toThrow(message);
  });
});
