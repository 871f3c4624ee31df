// `GET /agents?group=` with the real agent-groups plugin over the real store: only the group's
// members, a member the master does not know is no error, and an unknown group is a 400 that
// names the nearest one.
import { plugin as groupsPlugin } from '@runner/plugin-agent-groups';
import { plugin as storePlugin } from '@runner/plugin-store';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeRegistry, fakeAgent } from './fake-registry.js';
import { startTestMaster, type TestMaster } from './test-master.js';

const masters: TestMaster[] = [];
afterEach(async () => {
  for (const m of masters.splice(0)) await m.kernel.stop();
});

async function start() {
  const registry = new FakeRegistry([fakeAgent('web-1'), fakeAgent('web-2'), fakeAgent('db-1', { status: 'offline' })]);
  const master = await startTestMaster(registry, {}, undefined, [storePlugin, groupsPlugin]);
  masters.push(master);
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${master.base}/api/v1${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { agents: { name: string }[]; error: unknown } };
  };
}

describe('GET /agents?group=', () => {
  it("answers only the group's members, with the other filters applied too", async () => {
    const call = await start();
    await call('POST', '/agent-groups', { name: 'mixed', members: ['web-2', 'db-1', 'not-yet-registered'] });
    const names = async (query: string) =>
      (await call('GET', `/agents?${query}`)).body.agents.map((a: { name: string }) => a.name);
    expect(await names('group=mixed')).toEqual(['db-1', 'web-2']);
    expect(await names('group=mixed&status=online')).toEqual(['web-2']);
    expect(await names('group=')).toEqual(['db-1', 'web-1', 'web-2']);
  });

  it('refuses an unknown group with 400 naming the parameter and the nearest group', async () => {
    const call = await start();
    await call('POST', '/agent-groups', { name: 'web' });
    const { status, body } = await call('GET', '/agents?group=wbe');
    expect(status).toBe(400);
    expect(body.error).toMatchObject({
      code: 'invalid_input',
      field: 'group',
      message: 'group: unknown agent group "wbe" (did you mean "web"?)',
    });
  });
});
