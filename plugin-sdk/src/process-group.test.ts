import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as wait } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { signalProcessGroup, stopProcessGroup } from './process-group.js';

/** Whether a process runs (a zombie waiting to be reaped has ended). */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('process groups', () => {
  it('ends the leader with SIGTERM and a member that ignores it with SIGKILL after the grace', async () => {
    // The member prints its pid once its trap is set (a SIGTERM before that would end it).
    const child = spawn('/bin/sh', ['-c', `sh -c 'trap "" TERM; echo $$; exec sleep 300' & wait`], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const member = Number(await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(String(d)))));
    expect(alive(member)).toBe(true);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    stopProcessGroup(child.pid, 300);
    await exited;
    await wait(100);
    expect(alive(member)).toBe(true);
    await wait(600);
    expect(alive(member)).toBe(false);
  });

  it('does nothing for no pid or a group that is gone', () => {
    expect(signalProcessGroup(undefined, 'SIGTERM')).toBe(false);
    expect(() => stopProcessGroup(undefined)).not.toThrow();
  });
});
