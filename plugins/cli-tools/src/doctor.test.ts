import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandContext } from '@runner/plugin-sdk';
import { staticConfig } from '@runner/plugin-sdk/testing';
import { checkPort, checkResources } from './doctor.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A port held by a real listener on loopback. */
function listening(): Promise<number> {
  const server = createServer();
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

describe('doctor: ports', () => {
  it('names where this data directory’s master serves HTTP, not a configured port it does not use', async () => {
    const served = await listening();
    const configured = await listening();
    servers.pop()?.close(); // the configured port is free: the master was started with another
    const master = { pid: process.pid, http: `127.0.0.1:${served}` };
    expect(await checkPort('HTTP API port', '127.0.0.1', configured, master, '--http-port')).toEqual({
      name: 'HTTP API port',
      status: 'ok',
      detail: `the master (pid ${process.pid}) serves at 127.0.0.1:${served}, not the configured port ${configured} (started with --http-port)`,
    });
    expect(await checkPort('HTTP API port', '127.0.0.1', served, master, '--http-port')).toMatchObject({
      status: 'ok',
      detail: `the master (pid ${process.pid}) serves at 127.0.0.1:${served}`,
    });
  });

  it('says a free gRPC port is not the running master’s, and a busy one without a master is taken', async () => {
    const busy = await listening();
    const master = { pid: process.pid, http: '127.0.0.1:1' };
    const free = await listening();
    servers.pop()?.close();
    expect(await checkPort('agent gRPC port', '127.0.0.1', free, master, '--port')).toEqual({
      name: 'agent gRPC port',
      status: 'info',
      detail: `127.0.0.1:${free} is free: the running master (pid ${process.pid}) was started with another --port`,
    });
    expect(await checkPort('agent gRPC port', '127.0.0.1', busy, undefined, '--port')).toMatchObject({
      status: 'warn',
      detail: `127.0.0.1:${busy} is in use by another program`,
    });
  });
});

describe('doctor: task resources', () => {
  const context = (values: Record<string, unknown>) =>
    ({ config: staticConfig(values, mkdtempSync(join(tmpdir(), 'runner-doctor-'))) }) as unknown as CommandContext;

  it('says how resources.* would be held here, making nothing, and warns when CPU and memory would not be held together', () => {
    expect(checkResources(context({}))).toEqual({
      name: 'task resources',
      status: 'info',
      detail: 'no limits set (resources.*)',
    });
    expect(checkResources(context({ 'resources.memory.limit': 64, 'resources.enforcement': 'rlimit' }))).toEqual({
      name: 'task resources',
      status: 'warn',
      detail: expect.stringMatching(
        /^a master or agent started here would use rlimit: memory: each command's address space limited to 67108864 bytes/,
      ),
    });
    const held = checkResources(context({ 'resources.cpu.limit': 0.5 }));
    // Root here, with the v1 cpu hierarchy: a cgroup would hold it. Probed: none was made.
    if (process.getuid?.() === 0)
      expect(held).toMatchObject({ status: 'ok', detail: expect.stringContaining('cgroup') });
    expect(existsSync('/sys/fs/cgroup/cpu/runner-doctor')).toBe(false);
  });
});
