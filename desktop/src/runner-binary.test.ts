import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRunner } from './runner-binary.js';

const desktopDir = resolve(import.meta.dirname, '..');
let dir: string;
let binary: string;
let script: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'runner-desktop-bin-'));
  await mkdir(join(dir, 'bin'));
  binary = join(dir, 'bin', 'runner');
  await writeFile(binary, '#!/bin/sh\n');
  await chmod(binary, 0o755);
  script = join(dir, 'runner.js');
  await writeFile(script, '');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const base = { appPath: '/nonexistent/desktop', execPath: '/opt/runner/runner-desktop', platform: 'linux' as const };

describe('findRunner', () => {
  it('takes the saved setting first, then RUNNER_BIN, then PATH', () => {
    expect(findRunner({ ...base, setting: binary, env: { RUNNER_BIN: script } })).toEqual({
      command: binary,
      args: [],
      env: {},
      source: 'the runner path in settings',
    });
    expect(findRunner({ ...base, env: { RUNNER_BIN: binary, PATH: '/usr/bin' } }).source).toBe('RUNNER_BIN');
    expect(findRunner({ ...base, env: { PATH: `/nonexistent:${join(dir, 'bin')}` } })).toMatchObject({
      command: binary,
      source: `PATH (${binary})`,
    });
  });

  it("runs a JavaScript runner with the app's own executable as Node", () => {
    expect(findRunner({ ...base, env: { RUNNER_BIN: script } })).toEqual({
      command: base.execPath,
      args: [script],
      env: { ELECTRON_RUN_AS_NODE: '1' },
      source: 'RUNNER_BIN',
    });
  });

  it('finds the bin of a built checkout beside desktop/', () => {
    const found = findRunner({ appPath: desktopDir, execPath: process.execPath, env: { PATH: '/nonexistent' } });
    expect(found.args[0]).toBe(resolve(desktopDir, '..', 'kernel', 'bin', 'runner.js'));
    expect(found.env).toEqual({ ELECTRON_RUN_AS_NODE: '1' });
  });

  it('finds the JavaScript behind a Windows npm shim', async () => {
    const npmDir = join(dir, 'npm');
    await mkdir(join(npmDir, 'node_modules', '@runner', 'kernel', 'bin'), { recursive: true });
    await writeFile(join(npmDir, 'runner.cmd'), '@echo off\n');
    const js = join(npmDir, 'node_modules', '@runner', 'kernel', 'bin', 'runner.js');
    await writeFile(js, '');
    expect(findRunner({ ...base, platform: 'win32', env: { Path: `C:\\nothing;${npmDir}` } }).args).toEqual([js]);
  });

  it('says where it looked and what to do when there is none', () => {
    expect(() => findRunner({ ...base, env: { PATH: '/nonexistent' } })).toThrow(
      /cannot find the runner command .*no runner path in settings; RUNNER_BIN not set; no runner on PATH; no built checkout at \/nonexistent\/kernel\/bin\/runner.js.*set RUNNER_BIN/,
    );
    expect(() => findRunner({ ...base, env: { RUNNER_BIN: '/nonexistent/runner' } })).toThrow(
      'RUNNER_BIN=/nonexistent/runner is not a file',
    );
    expect(() => findRunner({ ...base, setting: '/nonexistent/runner', env: {} })).toThrow(
      'the runner path in settings, /nonexistent/runner, is not a file',
    );
  });
});
