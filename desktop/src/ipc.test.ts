import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHANNELS } from './bridge.js';
import { fakeElectron, type FakeElectron } from './fake-electron.js';
import { MAX_WORKFLOW_BYTES, registerIpcHandlers, runFailedNotification } from './ipc.js';

const MASTER = 'http://127.0.0.1:41234';
let dir: string;
let electron: FakeElectron;
let shown: number;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'runner-desktop-ipc-'));
  electron = fakeElectron(dir);
  shown = 0;
  registerIpcHandlers({
    facade: electron,
    masterOrigin: () => MASTER,
    window: () => undefined,
    chooseConnection: async () => ({ id: 'embedded', name: 'Embedded master', url: MASTER }),
    showWindow: () => void shown++,
  });
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('IPC handlers', () => {
  it('answer only pages of the master the window shows', async () => {
    await expect(electron.invoke(CHANNELS.chooseConnection, `${MASTER}/agents`)).resolves.toMatchObject({
      id: 'embedded',
    });
    for (const sender of ['https://evil.example/', 'file:///tmp/x.html', undefined, 'garbage']) {
      await expect(electron.invoke(CHANNELS.chooseConnection, sender)).rejects.toThrow(/refused a call from/);
      await expect(electron.invoke(CHANNELS.openWorkflowFile, sender)).rejects.toThrow(/refused a call from/);
      await expect(electron.invoke(CHANNELS.notifyRunFailed, sender, { runId: 'r', workflow: 'w' })).rejects.toThrow(
        /refused a call from/,
      );
    }
    expect(electron.notifications).toEqual([]);
  });

  it('open a workflow file the user picks, or nothing when cancelled', async () => {
    const file = join(dir, 'deploy.yaml');
    await writeFile(file, 'name: deploy\ntasks: []\n');
    electron.answers.push([file], 'cancel');
    await expect(electron.invoke(CHANNELS.openWorkflowFile, `${MASTER}/executions`)).resolves.toEqual({
      name: 'deploy.yaml',
      path: file,
      content: 'name: deploy\ntasks: []\n',
    });
    await expect(electron.invoke(CHANNELS.openWorkflowFile, `${MASTER}/`)).resolves.toBeNull();
    await expect(electron.invoke(CHANNELS.openWorkflowFile, `${MASTER}/`, 'extra')).rejects.toThrow(
      /takes no arguments, got 1/,
    );
  });

  it('refuse a file too large or not text', async () => {
    const big = join(dir, 'big.yaml');
    await writeFile(big, Buffer.alloc(MAX_WORKFLOW_BYTES + 1, 'a'));
    const binary = join(dir, 'bin.yaml');
    await writeFile(binary, Buffer.from([0xff, 0xfe, 0xfd, 0x00]));
    electron.answers.push([big], [binary], [dir]);
    await expect(electron.invoke(CHANNELS.openWorkflowFile, `${MASTER}/`)).rejects.toThrow(
      `${big} is ${MAX_WORKFLOW_BYTES + 1} bytes; a workflow file may have at most ${MAX_WORKFLOW_BYTES}`,
    );
    await expect(electron.invoke(CHANNELS.openWorkflowFile, `${MASTER}/`)).rejects.toThrow(/not valid|encoded/i);
    await expect(electron.invoke(CHANNELS.openWorkflowFile, `${MASTER}/`)).rejects.toThrow(`${dir} is not a file`);
  });

  it('notify a failed run, and bring the window forward when it is clicked', async () => {
    await electron.invoke(CHANNELS.notifyRunFailed, `${MASTER}/executions`, {
      runId: '01J9',
      workflow: 'deploy',
      message: '\ntask "migrate" failed on web-2: exit code 1\nstack...',
    });
    expect(electron.notifications).toMatchObject([
      { title: 'Run failed: deploy', body: 'Run 01J9: task "migrate" failed on web-2: exit code 1' },
    ]);
    electron.notifications[0].onClick!();
    expect(shown).toBe(1);
    await expect(electron.invoke(CHANNELS.notifyRunFailed, `${MASTER}/`, { runId: 'r' })).rejects.toThrow(
      /workflow must be a non-empty string/,
    );
    await expect(electron.invoke(CHANNELS.notifyRunFailed, `${MASTER}/`)).rejects.toThrow(/takes one argument, got 0/);
    expect(runFailedNotification({ runId: 'r', workflow: 'w', message: 'x'.repeat(500) }).body).toHaveLength(
      'Run r: '.length + 200,
    );
  });
});
