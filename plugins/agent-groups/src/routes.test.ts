// The groups API over a real HTTP server on a loopback port and the real store in a temp data
// directory: CRUD, bulk members, the errors a client sees, and groups surviving a restart.
import { plugin as httpPlugin } from '@runner/plugin-http';
import { AgentGroupsRef, HttpRouterRef } from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as storePlugin } from '@runner/plugin-store';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { plugin } from './plugin.js';

const kernels: TestKernel[] = [];
afterEach(async () => {
  for (const k of kernels.splice(0)) await k.stop();
});

async function start(dataDir?: string) {
  const kernel = await createTestKernel({
    plugins: [storePlugin, httpPlugin, plugin],
    profile: 'master',
    dataDir,
    config: { 'http.port': 0, 'http.bind_address': '127.0.0.1' },
  });
  kernels.push(kernel);
  await kernel.ready();
  const port = kernel.get(HttpRouterRef).address()?.port;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  return { kernel, call, port };
}

describe('/api/v1/agent-groups', () => {
  it('creates, lists, shows, changes and deletes a group', async () => {
    const { call } = await start();
    expect((await call('GET', '/agent-groups')).body).toEqual({ groups: [], total: 0 });

    const created = await call('POST', '/agent-groups', {
      name: 'web',
      description: ' front ends ',
      members: ['web-2', 'web-1', 'web-2'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'web', description: 'front ends', members: ['web-1', 'web-2'] });
    expect(created.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    await call('POST', '/agent-groups', { name: 'db' });
    const list = await call('GET', '/agent-groups');
    expect(list.body.total).toBe(2);
    expect(list.body.groups.map((g: { name: string; members: string[] }) => [g.name, g.members])).toEqual([
      ['db', []],
      ['web', ['web-1', 'web-2']],
    ]);

    const patched = await call('PATCH', '/agent-groups/web', { description: 'the web tier', members: ['web-3'] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ description: 'the web tier', members: ['web-3'] });

    expect((await call('GET', '/agent-groups/web')).body.members).toEqual(['web-3']);
    expect((await call('DELETE', '/agent-groups/web')).status).toBe(204);
    expect((await call('GET', '/agent-groups/web')).status).toBe(404);
    expect((await call('GET', '/agent-groups')).body.total).toBe(1);
  });

  it('adds and removes many members at once, ignoring those already in or not in', async () => {
    const { call } = await start();
    await call('POST', '/agent-groups', { name: 'web', members: ['web-1'] });
    const added = await call('POST', '/agent-groups/web/members', { agents: ['web-1', 'web-2', 'web-3'] });
    expect(added.status).toBe(200);
    expect(added.body.members).toEqual(['web-1', 'web-2', 'web-3']);
    const removed = await call('DELETE', '/agent-groups/web/members?agents=web-1,web-3,never-there');
    expect(removed.status).toBe(200);
    expect(removed.body.members).toEqual(['web-2']);
  });

  it('refuses bad names, taken names and unknown groups with messages naming them', async () => {
    const { call } = await start();
    const bad = await call('POST', '/agent-groups', { name: 'web tier' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe(
      'name: group name "web tier" is not valid: use letters, digits, ".", "_" and "-" (at most 63, starting with a letter or digit)',
    );
    expect(bad.body.error.field).toBe('name');

    await call('POST', '/agent-groups', { name: 'web' });
    const badMember = await call('POST', '/agent-groups/web/members', { agents: ['web-1', 'group:db'] });
    expect(badMember.status).toBe(400);
    expect(badMember.body.error.field).toBe('agents[1]');
    expect(badMember.body.error.message).toContain('agent name "group:db" is not valid');

    const taken = await call('POST', '/agent-groups', { name: 'web' });
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toBe('agent group "web" already exists');

    const unknown = await call('POST', '/agent-groups/wbe/members', { agents: ['web-1'] });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toBe('agent group "wbe" does not exist (did you mean "web"?) (groups: web)');

    const extra = await call('POST', '/agent-groups', { name: 'x', colour: 'red' });
    expect(extra.status).toBe(400);
    expect(extra.body.error.field).toBe('colour');
  });

  it('keeps groups across a restart of the master', async () => {
    const first = await start();
    await first.call('POST', '/agent-groups', { name: 'web', description: 'front', members: ['web-1', 'offline-9'] });
    await first.call('POST', '/agent-groups/web/members', { agents: ['web-2'] });
    const dataDir = first.kernel.config.dataDir;
    await first.kernel.stop();
    kernels.splice(kernels.indexOf(first.kernel), 1);

    const second = await start(dataDir);
    expect(second.kernel.get(AgentGroupsRef).get('web')).toMatchObject({
      description: 'front',
      members: ['offline-9', 'web-1', 'web-2'],
    });
  });
});

describe('WebSocket agent_group_update', () => {
  it('tells open pages of every created, changed and deleted group, once durable', async () => {
    const { call, port } = await start();
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/ws`);
    const seen: unknown[] = [];
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; data: unknown };
      if (message.type === 'agent_group_update') seen.push(message.data);
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    try {
      await call('POST', '/agent-groups', { name: 'web', members: ['web-1'] });
      await call('POST', '/agent-groups/web/members', { agents: ['web-1'] }); // nothing new: no message
      await call('POST', '/agent-groups/web/members', { agents: ['web-2'] });
      await call('DELETE', '/agent-groups/web');
      await expect.poll(() => seen.length).toBe(3);
      expect(seen).toEqual([
        { name: 'web', change: 'created', members: 1 },
        { name: 'web', change: 'updated', members: 2 },
        { name: 'web', change: 'deleted', members: 0 },
      ]);
    } finally {
      ws.terminate();
    }
  });
});
