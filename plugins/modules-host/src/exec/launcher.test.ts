import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { plugin } from '../../index.js';
import { HelperLauncher } from './launcher.js';
import { createExecModule } from './run.js';
import { luaCallContext, setUpLuaModules } from '@runner/plugin-sdk/testing';

/** Pids of this process's children whose command line mentions `marker`. */
function children(marker: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const ppid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
        return ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

describe('the process helper', () => {
  it('reports a run in flight when the helper dies, then starts processes directly', async () => {
    const problems: string[] = [];
    const launcher = new HelperLauncher((p) => problems.push(p), { directLaunches: 0 });
    const exec = createExecModule(launcher);
    expect(((await exec.run(luaCallContext().call, 'echo warm')) as any).stdout).toBe('warm\n');
    expect(await launcher.whenReady()).toBe(true);
    const helperPid = launcher.helperPid!;
    let sleeper: number | undefined;
    const { call } = luaCallContext({}, (line) => {
      // The command has started: kill the helper under it.
      if (line.message === 'exec.run: sleep 30' && sleeper === undefined) {
        sleeper = line.fields.pid as number;
        process.kill(helperPid, 'SIGKILL');
      }
    });
    try {
      await expect(exec.run(call, 'sleep 30')).rejects.toThrow(
        'exec.run: the process helper exited (SIGKILL) while the command ran; its outcome is unknown: sleep 30',
      );
    } finally {
      if (sleeper !== undefined) process.kill(-sleeper, 'SIGKILL');
    }
    expect(problems).toEqual(['the process helper exited (SIGKILL)']);
    expect(((await exec.run(luaCallContext().call, 'echo still works')) as any).stdout).toBe('still works\n');
    expect(launcher.helperPid).toBeUndefined(); // direct for now
    launcher.close();
  });

  it('starts commands from this process until it is ready, then takes them', async () => {
    const launcher = new HelperLauncher();
    const exec = createExecModule(launcher);
    const parent = async () => Number(((await exec.run(luaCallContext().call, 'echo $PPID')) as any).stdout);
    // The first call starts no helper: a run of one command would pay a Node start for nothing.
    expect(await parent()).toBe(process.pid);
    expect(launcher.helperPid).toBeUndefined();
    // The second starts it and does not wait for it.
    expect(await parent()).toBe(process.pid);
    expect(launcher.helperPid).toBeDefined();
    expect(await launcher.whenReady()).toBe(true);
    expect(await parent()).toBe(launcher.helperPid);
    launcher.close();
    expect(await launcher.whenReady()).toBe(false);
  });

  it('reports an exit when it happens, while the output of what the command left running stays open', async () => {
    const launcher = new HelperLauncher(undefined, { directLaunches: 0 });
    const spec = (script: string) => ({
      file: '/bin/sh',
      args: ['-c', script],
      cwd: process.cwd(),
      env: process.env,
      cap: 1024,
    });
    const run = (script: string) => {
      const seen: [string, number][] = [];
      const started = performance.now();
      return new Promise<[string, number][]>((resolve) =>
        launcher.launch(spec(script), {
          pid() {},
          data() {},
          error() {},
          exit: (code) => seen.push([`exit ${code}`, performance.now() - started]),
          close: () => resolve([...seen, ['close', performance.now() - started]]),
        }),
      );
    };
    await run('true'); // starts the helper
    expect(await launcher.whenReady()).toBe(true);
    // Exit and end of output together: one message from the helper, both events, in order.
    expect((await run('exit 3')).map(([event]) => event)).toEqual(['exit 3', 'close']);
    // The shell exits at once; the sleep it left behind holds the pipes for a second.
    const [[exit, exitAt], [close, closeAt]] = await run('sleep 1 &');
    expect([exit, close]).toEqual(['exit 0', 'close']);
    expect(closeAt - exitAt).toBeGreaterThan(500);
    launcher.close();
  });

  it('is started on the second use and stopped with the plugin', async () => {
    const { modules, kernel } = await setUpLuaModules([plugin]);
    const marker = 'startChild(spawn, m.spec';
    const before = children(marker);
    await modules.get('exec')!.run(luaCallContext().call, '/bin/true');
    expect(children(marker).filter((pid) => !before.includes(pid))).toEqual([]);
    await modules.get('exec')!.run(luaCallContext().call, '/bin/true');
    const started = children(marker).filter((pid) => !before.includes(pid));
    expect(started).toHaveLength(1);
    await kernel.stop();
    // The helper exits on its own once killed; wait for the kernel to have reaped it.
    await new Promise<void>((resolve) => {
      const check = () => (children(marker).includes(started[0]) ? setImmediate(check) : resolve());
      check();
    });
    expect(children(marker)).not.toContain(started[0]);
  });
});
