import { describe, expect, it } from 'vitest';
import { CHANNELS, exposeBridge, parseRunFailure, type RunnerDesktopBridge } from './bridge.js';

function harness() {
  const exposed = new Map<string, unknown>();
  const calls: { channel: string; args: unknown[] }[] = [];
  exposeBridge(
    { exposeInMainWorld: (key, api) => void exposed.set(key, api) },
    {
      invoke: async (channel, ...args) => {
        calls.push({ channel, args });
        return channel === CHANNELS.openWorkflowFile ? null : { id: 'embedded', name: 'Embedded master', url: 'x' };
      },
    },
  );
  return { bridge: exposed.get('runnerDesktop') as RunnerDesktopBridge, exposed, calls };
}

describe('exposeBridge', () => {
  it('exposes one frozen object with the three calls, each on its own channel', async () => {
    const { bridge, exposed, calls } = harness();
    expect([...exposed.keys()]).toEqual(['runnerDesktop']);
    expect(Object.isFrozen(bridge)).toBe(true);
    expect(Object.keys(bridge).sort()).toEqual(['chooseConnection', 'notifyRunFailed', 'openWorkflowFile', 'version']);
    await expect(bridge.chooseConnection()).resolves.toMatchObject({ id: 'embedded' });
    await expect(bridge.openWorkflowFile()).resolves.toBeNull();
    await bridge.notifyRunFailed({ runId: 'r1', workflow: 'deploy', message: 'boom' });
    expect(calls).toEqual([
      { channel: CHANNELS.chooseConnection, args: [] },
      { channel: CHANNELS.openWorkflowFile, args: [] },
      { channel: CHANNELS.notifyRunFailed, args: [{ runId: 'r1', workflow: 'deploy', message: 'boom' }] },
    ]);
  });

  it('copies only the three fields of a failure, whatever the page passes', async () => {
    const { bridge, calls } = harness();
    const sneaky = Object.assign(Object.create({ inherited: 1 }), { runId: 'r', workflow: 'w', extra: 'x' });
    await bridge.notifyRunFailed(sneaky);
    expect(calls[0].args[0]).toEqual({ runId: 'r', workflow: 'w', message: undefined });
  });
});

describe('parseRunFailure', () => {
  it('accepts a failure and drops nothing it knows', () => {
    expect(parseRunFailure({ runId: 'r1', workflow: 'deploy' })).toEqual({ runId: 'r1', workflow: 'deploy' });
    expect(parseRunFailure({ runId: 'r1', workflow: 'deploy', message: 'x' })).toEqual({
      runId: 'r1',
      workflow: 'deploy',
      message: 'x',
    });
  });

  it('names what is wrong', () => {
    expect(() => parseRunFailure('r1')).toThrow(/expected an object/);
    expect(() => parseRunFailure(null)).toThrow(/expected an object/);
    expect(() => parseRunFailure({ runId: 'r1' })).toThrow(/workflow must be a non-empty string/);
    expect(() => parseRunFailure({ runId: 7, workflow: 'w' })).toThrow(/runId must be/);
    expect(() => parseRunFailure({ runId: 'r', workflow: 'w'.repeat(301) })).toThrow(/at most 300/);
    expect(() => parseRunFailure({ runId: 'r', workflow: 'w', message: 5 })).toThrow(/message must be a string/);
    expect(() => parseRunFailure({ runId: 'r', workflow: 'w', url: 'file:///' })).toThrow(/unknown field url/);
  });
});
