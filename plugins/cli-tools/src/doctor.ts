import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { dirname, join } from 'node:path';
import { createMasterClient, isProcessAlive, localMaster, type CommandContext } from '@runner/plugin-sdk';

export interface Check {
  name: string;
  status: 'ok' | 'info' | 'warn' | 'fail';
  detail: string;
  /** What to do about it, for anything but ok. */
  fix?: string;
}

const MIN_NODE = [20, 19];

/** Runs every check; none throws, each reports what it found and how to fix it. */
export async function runChecks(ctx: CommandContext): Promise<Check[]> {
  const master = readMasterFile(ctx.config.dataDir);
  return [
    checkNode(),
    ...checkConfig(ctx),
    checkDataDir(ctx.config.dataDir),
    await checkMaster(ctx, master),
    await checkPort(
      'HTTP API port',
      ctx.config.get('http.bind_address', '0.0.0.0'),
      ctx.config.get('http.port', 8080),
      master,
      '--http-port',
    ),
    await checkPort(
      'agent gRPC port',
      ctx.config.get('grpc.bind_address', '0.0.0.0'),
      ctx.config.get('grpc.port', 50053),
      master,
      '--port',
    ),
    checkPlugins(ctx),
  ];
}

function checkNode(): Check {
  const [major, minor] = process.versions.node.split('.').map(Number);
  const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  return ok
    ? { name: 'node', status: 'ok', detail: `v${process.versions.node}` }
    : {
        name: 'node',
        status: 'fail',
        detail: `v${process.versions.node} is too old`,
        fix: `install Node.js ${MIN_NODE.join('.')} or newer`,
      };
}

/**
 * The config checked against the plugins' declarations (the kernel did it; doctor reports each
 * problem on its own line with what to do): wrong types, unknown keys, keys of absent plugins.
 */
export function checkConfig(ctx: CommandContext): Check[] {
  const file = join(ctx.config.dataDir, 'config.yaml');
  const checks: Check[] = [];
  if (ctx.configError) {
    const details = (ctx.configError as { details?: { problems?: unknown } }).details;
    const problems = Array.isArray(details?.problems) ? (details.problems as string[]) : [ctx.configError.message];
    for (const problem of problems) {
      checks.push({ name: 'config', status: 'fail', detail: problem, fix: fixFor(problem) });
    }
  }
  for (const warning of ctx.config.warnings) {
    checks.push({
      name: 'config',
      status: 'warn',
      detail: warning,
      fix: `${fixFor(warning)}; or load the plugin that reads it (--plugins-dir)`,
    });
  }
  if (checks.length === 0) {
    checks.push({
      name: 'config',
      status: 'ok',
      detail: existsSync(file) ? file : `no config file (${file}); defaults, RUNNER_* variables and flags apply`,
    });
  }
  return checks;
}

function fixFor(problem: string): string {
  const suggestion = /did you mean ([\w.]+)\?/.exec(problem);
  const where = /\(from ([^)]+)\)/.exec(problem)?.[1] ?? 'the config';
  if (suggestion) return `rename the key to ${suggestion[1]} in ${where}`;
  if (problem.startsWith('unknown config key'))
    return `remove the key from ${where} (\`runner config show\` lists every key)`;
  const key = /^config (\S+)/.exec(problem)?.[1];
  if (key) return `correct ${key} in ${where} (\`runner config show\` gives each key's type and help)`;
  return 'correct the value named above (config file, RUNNER_* variable or flag)';
}

function checkDataDir(dir: string): Check {
  const name = 'data directory';
  if (existsSync(dir)) {
    try {
      accessSync(dir, constants.W_OK | constants.R_OK);
      return { name, status: 'ok', detail: dir };
    } catch {
      return {
        name,
        status: 'fail',
        detail: `${dir} is not writable`,
        fix: `chown it to this user, or choose another with --data-dir or RUNNER_DATA_DIR`,
      };
    }
  }
  // It will be created with mkdir -p: the nearest existing ancestor must be a writable directory.
  let ancestor = dirname(dir);
  while (!existsSync(ancestor) && dirname(ancestor) !== ancestor) ancestor = dirname(ancestor);
  try {
    if (!statSync(ancestor).isDirectory()) throw new Error('not a directory');
    accessSync(ancestor, constants.W_OK);
    return { name, status: 'info', detail: `${dir} does not exist yet; it is created on first use` };
  } catch {
    return {
      name,
      status: 'fail',
      detail: `${dir} cannot be created: ${ancestor} is not a writable directory`,
      fix: `choose another with --data-dir or RUNNER_DATA_DIR`,
    };
  }
}

export interface MasterFile {
  pid: number;
  http: string;
}

function readMasterFile(dataDir: string): MasterFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, 'master.json'), 'utf8')) as MasterFile;
    return isProcessAlive(parsed.pid) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

async function checkMaster(ctx: CommandContext, local: MasterFile | undefined): Promise<Check> {
  const name = 'master';
  const remote = ctx.config.find('master.address');
  if (typeof remote === 'string' && remote) {
    const reachable = await tcpReachable(remote);
    return reachable
      ? { name, status: 'ok', detail: `${remote} (RUNNER_MASTER_ADDR) accepts connections` }
      : {
          name,
          status: 'fail',
          detail: `${remote} (from ${ctx.config.sourceOf('master.address')}) does not accept connections`,
          fix: 'start the master there (runner server) or correct RUNNER_MASTER_ADDR',
        };
  }
  if (!local) {
    return {
      name,
      status: 'info',
      detail: 'no master is running on this data directory; runner run works embedded',
      fix: 'start one with `runner server`',
    };
  }
  // Through the master client: it dials https:// and trusts the certificate when master.json names one.
  const endpoint = await localMaster(ctx.config.dataDir);
  const base = endpoint?.base ?? `http://${local.http}`;
  try {
    if (!endpoint) throw new Error('master.json changed while doctor read it');
    await createMasterClient(endpoint, { dataDir: ctx.config.dataDir }).request('GET', '/health', { timeoutMs: 2000 });
    return { name, status: 'ok', detail: `pid ${local.pid} answers at ${base}` };
  } catch (error) {
    return {
      name,
      status: 'fail',
      detail: `pid ${local.pid} runs but ${base}/api/v1/health fails: ${(error as Error).message}`,
      fix: 'look at its log (<data-dir>/logs/runner.log) or restart it',
    };
  }
}

export async function checkPort(
  name: string,
  host: string,
  port: number,
  master: MasterFile | undefined,
  flag: string,
): Promise<Check> {
  const free = await new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
  // This data directory's master is running: what matters is where it listens, not whether the
  // configured port is free (it may have been started with another one).
  if (master) {
    const served = name === 'HTTP API port' ? master.http : undefined;
    if (served !== undefined) {
      const servedPort = Number(served.slice(served.lastIndexOf(':') + 1));
      return {
        name,
        status: 'ok',
        detail:
          servedPort === port
            ? `the master (pid ${master.pid}) serves at ${served}`
            : `the master (pid ${master.pid}) serves at ${served}, not the configured port ${port} (started with ${flag})`,
      };
    }
    return free
      ? {
          name,
          status: 'info',
          detail: `${host}:${port} is free: the running master (pid ${master.pid}) was started with another ${flag}`,
        }
      : {
          name,
          status: 'ok',
          detail: `${host}:${port} is in use, by the running master (pid ${master.pid}) presumably`,
        };
  }
  if (free) return { name, status: 'ok', detail: `${host}:${port} is free` };
  return {
    name,
    status: 'warn',
    detail: `${host}:${port} is in use by another program`,
    fix: `stop that program or start the master with ${flag} <n>`,
  };
}

function checkPlugins(ctx: CommandContext): Check {
  const external = ctx.plugins.filter((p) => p.descriptor.origin === 'external').map((p) => p.descriptor.id);
  const modules = ctx.plugins.reduce((n, p) => n + p.luaModules.length, 0);
  return {
    name: 'plugins',
    status: 'ok',
    detail: `${ctx.plugins.length} loaded (${modules} Lua modules)${external.length ? `; external: ${external.join(', ')}` : ''}`,
  };
}

function tcpReachable(address: string): Promise<boolean> {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(address.slice(at + 1));
  if (at < 0 || !Number.isInteger(port)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

export function formatChecks(checks: readonly Check[], colour: boolean): string {
  const mark = { ok: '✔', info: 'ℹ', warn: '!', fail: '✖' };
  const paint = { ok: '\x1b[32m', info: '\x1b[36m', warn: '\x1b[33m', fail: '\x1b[31m' };
  const width = Math.max(...checks.map((c) => c.name.length));
  return checks
    .map((c) => {
      const symbol = colour ? `${paint[c.status]}${mark[c.status]}\x1b[0m` : mark[c.status];
      const fix = c.fix && c.status !== 'ok' ? `\n  ${' '.repeat(width)}  fix: ${c.fix}` : '';
      return `${symbol} ${c.name.padEnd(width)}  ${c.detail}${fix}`;
    })
    .join('\n');
}
