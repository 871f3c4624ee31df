import { describe, expect, it } from 'vitest';
import type { ExecRequest__Output } from '@runner/proto';
import { runCommand } from './exec.js';

const request = (overrides: Partial<ExecRequest__Output>): ExecRequest__Output => ({
  command: '',
  argv: [],
  cwd: '',
  timeout_ms: 0,
  ...overrides,
});
const limits = { defaultTimeoutMs: 10_000, outputBytes: 1024 };
const never = new AbortController().signal;

describe('exec on the agent', () => {
  it('runs a string through the shell and returns its output and exit code', async () => {
    const result = await runCommand(request({ command: 'echo out; echo err >&2; exit 3', cwd: '/tmp' }), limits, never);
    expect(result).toMatchObject({ stdout: 'out\n', stderr: 'err\n', exit_code: 3, exited: true, timed_out: false });
    expect(result.duration).toBeGreaterThan(0);
    expect((await runCommand(request({ command: 'pwd', cwd: '/tmp' }), limits, never)).stdout).toBe('/tmp\n');
  });

  it('runs a list without a shell', async () => {
    expect(await runCommand(request({ argv: ['echo', '$HOME', '; ls'] }), limits, never)).toMatchObject({
      stdout: '$HOME ; ls\n',
      exit_code: 0,
    });
    expect(await runCommand(request({ argv: ['no-such-program-x'] }), limits, never)).toMatchObject({
      exited: false,
      stderr: 'no-such-program-x: command not found\n',
    });
  });

  it('stops a command at its timeout', async () => {
    const started = Date.now();
    const result = await runCommand(request({ command: 'sleep 120', timeout_ms: 200 }), limits, never);
    expect(result).toMatchObject({ timed_out: true, exited: false });
    // A ceiling far below the sleep's 120 s, not a speed target.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('stops a command when cancelled', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    expect(await runCommand(request({ command: 'sleep 10' }), limits, controller.signal)).toMatchObject({
      exited: false,
      timed_out: false,
    });
  });

  it('cuts output past the limit and says so', async () => {
    const result = await runCommand(request({ command: 'head -c 5000 /dev/zero | tr "\\0" x' }), limits, never);
    expect(result.stdout).toMatch(/^x{1024}\n\[output cut at 1024 bytes; 3976 more bytes dropped\]\n$/);
  });
});
