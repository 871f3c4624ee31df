import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import {
  confineResources,
  createMasterClient,
  readResourceSettings,
  findMaster,
  isProcessAlive,
  type CommandContext,
  type DoctorCheck,
} from '@runner/plugin-sdk';

export type Check = DoctorCheck;

const MIN_NODE = [20, 19];

/** Runs every check; none throws, each reports what it found and how to fix it. */
export async function runChecks(ctx: CommandContext): Promise<Check[]> {
  const master = readMasterFile(ctx.config.dataDir);
  return [
    checkNode(),
    ...checkConfig(ctx),
    checkDataDir(ctx.config.dataDir),
    checkResources(ctx),
    await checkMaster(ctx, master),
    // The addresses a master started here would bind: the declared defaults (loopback), not a guess.
    await checkPort(
      'HTTP API port',
      ctx.config.get('http.bind_address', '127.0.0.1'),
      ctx.config.get('http.port', 8080),
      master,
      '--http-port',
    ),
    await checkPort(
      'agent gRPC port',
      (ctx.config.find('grpc.bind_address') as string | undefined) ?? ctx.config.get('http.bind_address', '127.0.0.1'),
      ctx.config.get('grpc.port', 50053),
      master,
      '--port',
    ),
    checkPlugins(ctx),
    // What the plugins check of their own parts (the store: its PostgreSQL, when store.url is set).
    ...((await ctx.doctorChecks?.()) ?? []),
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

/**
 * How resources.* would hold the tasks of a master or agent started here, by this user (probed:
 * nothing is made): a cgroup v2 or v1, or each command's resource limits.
 */
export function checkResources(ctx: CommandContext): Check {
  const settings = readResourceSettings(ctx.config);
  const confinement = confineResources('runner-doctor', settings, undefined, true);
  if (!confinement.lines.length)
    return { name: 'task resources', status: 'info', detail: 'no limits set (resources.*)' };
  const held = confinement.kind.startsWith('cgroup');
  const limited = (settings.cpuCores > 0 || settings.memoryBytes > 0) && !held;
  return {
    name: 'task resources',
    status: limited ? 'warn' : 'ok',
    detail: `a master or agent started here would use ${confinement.kind}: ${confinement.lines.join('; ')}`,
    ...(limited && settings.enforcement === 'auto'
      ? {
          fix: 'run the master or agent as root, or under systemd with Delegate=yes (cgroup v2), to have CPU throttled and memory held for the tasks together',
        }
      : {}),
  };
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

/**
 * The master the CLI would really use (`runner run`, `runner agent ...`): found as every command
 * finds it (findMaster: master.url, this data directory's master.json, master.address), and asked
 * for its health at that address.
 */
async function checkMaster(ctx: CommandContext, local: MasterFile | undefined): Promise<Check> {
  const name = 'master';
  let found: Awaited<ReturnType<typeof findMaster>>;
  try {
    found = await findMaster(ctx);
  } catch (error) {
    return {
      name,
      status: 'fail',
      detail: (error as Error).message,
      fix: 'start the master there (runner server), or correct RUNNER_MASTER_URL / RUNNER_MASTER_ADDR',
    };
  }
  const { endpoint } = found;
  if (!endpoint) {
    return {
      name,
      status: 'info',
      detail: `none found (${found.lookedAt.join('; ')}); runner run works embedded`,
      fix: 'start one with `runner server`, or point at one with RUNNER_MASTER_URL',
    };
  }
  const pid = endpoint.local && local ? `pid ${local.pid} ` : '';
  try {
    await createMasterClient(endpoint, { dataDir: ctx.config.dataDir }).request('GET', '/health', { timeoutMs: 2000 });
    return { name, status: 'ok', detail: `${pid}answers at ${endpoint.base} (from ${endpoint.source})` };
  } catch (error) {
    return {
      name,
      status: 'fail',
      detail: `${pid}at ${endpoint.base} (from ${endpoint.source}): ${(error as Error).message}`,
      fix: endpoint.local
        ? 'look at its log (<data-dir>/logs/runner.log) or restart it'
        : 'start the master there (runner server), or correct the address',
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
