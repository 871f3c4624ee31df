// StateCalls on its own: what it writes on the stream and how it reads the master's answers. The
// round trip with a real master is in agent-transport (state-proxy.test.ts) and test/e2e.
import type { AgentMessage, MasterMessage__Output, StateResponse__Output } from '@runner/proto';
import { describe, expect, it } from 'vitest';
import { StateCalls } from './state-calls.js';

function calls(timeoutMs = 5000) {
  const sent: AgentMessage[] = [];
  const state = new StateCalls({ master: 'm:50053', timeoutMs, send: (message) => (sent.push(message), true) });
  const answer = (callId: number, result: Partial<StateResponse__Output>) =>
    state.deliver({
      call_id: callId,
      body: 'state_result',
      state_result: { value_json: '', keys: [], changed: false, failed: null, ...result },
    } as MasterMessage__Output);
  return { state, sent, answer };
}

const run = { runId: 'run-1', task: 'render' };

describe('StateCalls', () => {
  it('sends the call with its own id and reads the answer with that id', async () => {
    const { state, sent, answer } = calls();
    const a = state.forward({ operation: 'set', scope: 'task', key: 'k', value: { b: [1, 2] } }, run);
    const b = state.forward({ operation: 'get', scope: 'workflow', key: 'k' }, run);
    const c = state.forward({ operation: 'set', scope: 'global', key: 'gone', value: null }, run);
    expect(sent.map((m) => m.state)).toEqual([
      { run_id: 'run-1', task: 'render', operation: 'set', scope: 'task', key: 'k', value_json: '{"b":[1,2]}' },
      { run_id: 'run-1', task: 'render', operation: 'get', scope: 'workflow', key: 'k', value_json: '' },
      { run_id: 'run-1', task: 'render', operation: 'set', scope: 'global', key: 'gone', value_json: '' },
    ]);
    const [ida, idb, idc] = sent.map((m) => m.call_id as number);
    expect(new Set([ida, idb, idc]).size).toBe(3);
    answer(idb, { value_json: '{"b":[1,2]}' });
    answer(idc, {});
    answer(ida, { changed: true });
    expect(await a).toEqual({ value: null, keys: [], changed: true });
    expect(await b).toMatchObject({ value: { b: [1, 2] } });
    expect(await c).toMatchObject({ value: null, changed: false });
    expect(state.inFlight).toBe(0);
  });

  it("rejects with the master's code and message, and drops answers nobody waits for", async () => {
    const { state, sent, answer } = calls();
    const refused = state.forward({ operation: 'get', scope: 'workflow', key: 'k' }, run);
    const id = sent[0].call_id as number;
    answer(id + 100, { changed: true });
    answer(id, { failed: { code: 'permission_denied', message: 'state.get: not yours' } });
    await expect(refused).rejects.toMatchObject({ code: 'permission_denied', message: 'state.get: not yours' });
    answer(id, { changed: true });
    expect(state.inFlight).toBe(0);
  });
});
