// Finds the `runner` command the embedded master is started with. The desktop app does not ship
// the runner itself (its native and wasm dependencies belong to an npm install); it uses the one
// the user has, in this order: the path saved in the app's settings, RUNNER_BIN, `runner` on
// PATH, and, in a development checkout, the monorepo's kernel/bin/runner.js.
import { existsSync, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { InvalidInputError } from '@runner/plugin-sdk';

/** How to start `runner`: a command, the arguments before runner's own, and extra environment. */
export interface RunnerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Where the command was found, for messages. */
  source: string;
}

export interface FindRunnerOptions {
  /** The path saved in the app's settings, if any. */
  setting?: string;
  env: NodeJS.ProcessEnv;
  /** The directory of the app's own code (desktop/ in a checkout): the monorepo is found from it. */
  appPath: string;
  /** The Electron (or Node) executable: a runner.js is run with it as Node. */
  execPath: string;
  platform?: NodeJS.Platform;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * A runner found at `path`. A JavaScript entry runs with the app's own executable as Node
 * (ELECTRON_RUN_AS_NODE): the user needs no separate Node, and Electron's Node is new enough.
 */
function commandFor(path: string, source: string, execPath: string): RunnerCommand {
  const real = realpathSync(path);
  if (real.endsWith('.js') || real.endsWith('.mjs')) {
    return { command: execPath, args: [real], env: { ELECTRON_RUN_AS_NODE: '1' }, source };
  }
  return { command: real, args: [], env: {}, source };
}

/** On Windows npm installs `runner.cmd` beside node_modules/@runner/kernel: run the JavaScript behind it. */
function windowsShimTarget(dir: string): string | undefined {
  const js = join(dir, 'node_modules', '@runner', 'kernel', 'bin', 'runner.js');
  return isFile(js) ? js : undefined;
}

function onPath(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | undefined {
  const dirs = (env.PATH ?? env.Path ?? '').split(platform === 'win32' ? ';' : delimiter).filter(Boolean);
  for (const dir of dirs) {
    if (platform === 'win32') {
      if (isFile(join(dir, 'runner.exe'))) return join(dir, 'runner.exe');
      if (isFile(join(dir, 'runner.cmd'))) {
        const target = windowsShimTarget(dir);
        if (target) return target;
      }
    } else if (isFile(join(dir, 'runner'))) {
      return join(dir, 'runner');
    }
  }
  return undefined;
}

/** Finds runner, or throws an error that says where it looked and how to point the app at it. */
export function findRunner(options: FindRunnerOptions): RunnerCommand {
  const platform = options.platform ?? process.platform;
  const looked: string[] = [];
  if (options.setting) {
    if (isFile(options.setting)) return commandFor(options.setting, 'the runner path in settings', options.execPath);
    throw new InvalidInputError(`the runner path in settings, ${options.setting}, is not a file`, {
      field: 'runnerPath',
    });
  }
  looked.push('no runner path in settings');
  const fromEnv = options.env.RUNNER_BIN;
  if (fromEnv) {
    if (isFile(fromEnv)) return commandFor(fromEnv, 'RUNNER_BIN', options.execPath);
    throw new InvalidInputError(`RUNNER_BIN=${fromEnv} is not a file`, { field: 'RUNNER_BIN' });
  }
  looked.push('RUNNER_BIN not set');
  const found = onPath(options.env, platform);
  if (found) return commandFor(found, `PATH (${found})`, options.execPath);
  looked.push('no runner on PATH');
  // A development checkout: desktop/ sits beside kernel/ (bin/runner.js loads kernel/dist).
  const checkout = join(dirname(options.appPath), 'kernel', 'bin', 'runner.js');
  if (isFile(checkout) && existsSync(join(dirname(options.appPath), 'kernel', 'dist'))) {
    return commandFor(checkout, `the checkout's ${checkout}`, options.execPath);
  }
  looked.push(`no built checkout at ${checkout}`);
  throw new InvalidInputError(
    `cannot find the runner command to start the embedded master (${looked.join('; ')}): set RUNNER_BIN to the runner command (kernel/bin/runner.js of a built checkout), put runner on PATH, or connect to a remote master`,
    { field: 'runnerPath' },
  );
}
