import { createHash } from 'node:crypto';
import { basename, resolve } from 'node:path';
import {
  InvalidInputError,
  luaOptionalBoolean,
  luaOptionalNumber,
  luaOptionalString,
  luaString,
  luaStringList,
  luaStringMap,
  readLuaOptions,
  runTool,
  toLuaValue,
  toolFailure,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
  type ToolResult,
} from '@runner/plugin-sdk';
import { dockerModule } from './spec.js';

/** `docker` or `podman`: the two share a command line, which is what this drives. */
export type EngineName = 'docker' | 'podman';

export interface EngineOptions {
  /** The CLI to run; defaults to the engine's name on PATH. */
  bin?: string;
  /** Extra environment for every command (DOCKER_HOST, CONTAINER_HOST). */
  env?: Record<string, string>;
}

/** The label that holds the hash of the settings a container was created from (idempotent `run`). */
export const CONFIG_LABEL = 'io.runner.config';

/** The functions of the `docker` or `podman` module over that engine's CLI. */
export function createEngineModule(
  engine: EngineName,
  options: EngineOptions = {},
): LuaModuleImplementation<keyof typeof dockerModule.functions> {
  const cli = new EngineCli(engine, options);
  const fn = (name: string): string => `${engine}.${name}`;
  return {
    images: (call, opts) => cli.list(call, ['image', 'ls'], readLuaOptions(fn('images'), 1, opts, []), false),
    containers: (call, opts) => {
      const o = readLuaOptions(fn('containers'), 1, opts, ['all']);
      return cli.list(call, ['ps'], o, luaOptionalBoolean(fn('containers'), 'option all', o.all) ?? false);
    },
    networks: (call) => cli.list(call, ['network', 'ls'], {}, false),
    volumes: (call) => cli.list(call, ['volume', 'ls'], {}, false),
    inspect: async (call, name, opts) => {
      const o = readLuaOptions(fn('inspect'), 2, opts, ['type']);
      const type = luaOptionalString(fn('inspect'), 'option type', o.type) ?? 'container';
      if (!['container', 'image', 'network', 'volume'].includes(type)) {
        throw new InvalidInputError(`${fn('inspect')}: option type must be container, image, network or volume`);
      }
      return toLuaValue(await cli.inspect(call, type as ObjectType, luaString(fn('inspect'), 'argument 1', name)));
    },
    pull: (call, image) => cli.pull(call, luaString(fn('pull'), 'argument 1 (image)', image)),
    build: (call, context, opts) => cli.build(call, luaString(fn('build'), 'argument 1 (context)', context), opts),
    remove_image: (call, image, opts) => {
      const o = readLuaOptions(fn('remove_image'), 2, opts, ['force']);
      const name = luaString(fn('remove_image'), 'argument 1 (image)', image);
      return cli.remove(
        call,
        'image',
        name,
        luaOptionalBoolean(fn('remove_image'), 'option force', o.force) ? ['-f'] : [],
      );
    },
    run: (call, image, opts) => cli.run(call, luaString(fn('run'), 'argument 1 (image)', image), opts),
    start: (call, name) => cli.setRunning(call, luaString(fn('start'), 'argument 1 (container)', name), true, []),
    stop: (call, name, opts) => {
      const o = readLuaOptions(fn('stop'), 2, opts, ['timeout']);
      const timeout = luaOptionalNumber(fn('stop'), 'option timeout', o.timeout);
      const args = timeout === undefined ? [] : ['-t', String(Math.round(timeout))];
      return cli.setRunning(call, luaString(fn('stop'), 'argument 1 (container)', name), false, args);
    },
    restart: (call, name) => cli.restart(call, luaString(fn('restart'), 'argument 1 (container)', name)),
    remove: (call, name, opts) => {
      const o = readLuaOptions(fn('remove'), 2, opts, ['force', 'volumes']);
      const flags = [
        ...(luaOptionalBoolean(fn('remove'), 'option force', o.force) ? ['-f'] : []),
        ...(luaOptionalBoolean(fn('remove'), 'option volumes', o.volumes) ? ['-v'] : []),
      ];
      return cli.remove(call, 'container', luaString(fn('remove'), 'argument 1 (container)', name), flags);
    },
    exec: (call, name, cmd, opts) => cli.exec(call, luaString(fn('exec'), 'argument 1 (container)', name), cmd, opts),
    logs: (call, name, opts) => cli.logs(call, luaString(fn('logs'), 'argument 1 (container)', name), opts),
    network_create: (call, name, opts) =>
      cli.createNetwork(call, luaString(fn('network_create'), 'argument 1', name), opts),
    network_remove: (call, name) =>
      cli.remove(call, 'network', luaString(fn('network_remove'), 'argument 1', name), []),
    volume_create: (call, name, opts) =>
      cli.createVolume(call, luaString(fn('volume_create'), 'argument 1', name), opts),
    volume_remove: (call, name) => cli.remove(call, 'volume', luaString(fn('volume_remove'), 'argument 1', name), []),
    compose_up: (call, dir, opts) =>
      cli.compose(call, 'up', luaString(fn('compose_up'), 'argument 1 (project directory)', dir), opts),
    compose_down: (call, dir, opts) =>
      cli.compose(call, 'down', luaString(fn('compose_down'), 'argument 1 (project directory)', dir), opts),
  };
}

type ObjectType = 'container' | 'image' | 'network' | 'volume';

const RUN_OPTIONS = [
  'name',
  'command',
  'env',
  'ports',
  'volumes',
  'network',
  'restart',
  'labels',
  'user',
  'workdir',
  'entrypoint',
  'hostname',
] as const;

/** What `run` creates a container from; its hash, in CONFIG_LABEL, says whether a container still matches. */
export interface ContainerSettings {
  name: string;
  image: string;
  command: string[];
  env: Record<string, string>;
  ports: string[];
  volumes: string[];
  network?: string;
  restart?: string;
  labels: Record<string, string>;
  user?: string;
  workdir?: string;
  entrypoint?: string;
  hostname?: string;
}

export function readRunSettings(fn: string, image: string, opts: LuaValue): ContainerSettings {
  const o = readLuaOptions(fn, 2, opts, RUN_OPTIONS);
  const name = luaOptionalString(fn, 'option name', o.name);
  if (!name) throw new InvalidInputError(`${fn}: option name is required (it is how a second run finds the container)`);
  return {
    name,
    image,
    command: luaStringList(fn, 'option command', o.command),
    env: luaStringMap(fn, 'option env', o.env),
    ports: luaStringList(fn, 'option ports', o.ports),
    volumes: luaStringList(fn, 'option volumes', o.volumes),
    network: luaOptionalString(fn, 'option network', o.network),
    restart: luaOptionalString(fn, 'option restart', o.restart),
    labels: luaStringMap(fn, 'option labels', o.labels),
    user: luaOptionalString(fn, 'option user', o.user),
    workdir: luaOptionalString(fn, 'option workdir', o.workdir),
    entrypoint: luaOptionalString(fn, 'option entrypoint', o.entrypoint),
    hostname: luaOptionalString(fn, 'option hostname', o.hostname),
  };
}

/** A stable hash of the settings: key order and map order do not change it. */
export function settingsHash(settings: ContainerSettings): string {
  const sorted = (map: Record<string, string>) =>
    Object.fromEntries(Object.entries(map).sort(([a], [b]) => a.localeCompare(b)));
  const canonical = { ...settings, env: sorted(settings.env), labels: sorted(settings.labels) };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex').slice(0, 16);
}

/** The `run -d` arguments that create the container described by `settings`. */
export function runArguments(settings: ContainerSettings): string[] {
  const args = ['run', '-d', '--name', settings.name, '--label', `${CONFIG_LABEL}=${settingsHash(settings)}`];
  for (const [key, value] of Object.entries(settings.labels)) args.push('--label', `${key}=${value}`);
  for (const [key, value] of Object.entries(settings.env)) args.push('-e', `${key}=${value}`);
  for (const port of settings.ports) args.push('-p', port);
  for (const volume of settings.volumes) args.push('-v', volume);
  if (settings.network) args.push('--network', settings.network);
  if (settings.restart) args.push('--restart', settings.restart);
  if (settings.user) args.push('--user', settings.user);
  if (settings.workdir) args.push('--workdir', settings.workdir);
  if (settings.entrypoint) args.push('--entrypoint', settings.entrypoint);
  if (settings.hostname) args.push('--hostname', settings.hostname);
  args.push(settings.image, ...settings.command);
  return args;
}

/** `{{json .}}` lines (docker) or one JSON array (podman) into a list of tables with lower-case keys. */
export function parseListing(stdout: string): Record<string, unknown>[] {
  const text = stdout.trim();
  if (text === '') return [];
  const rows: unknown[] = text.startsWith('[')
    ? (JSON.parse(text) as unknown[])
    : text.split('\n').map((line) => JSON.parse(line) as unknown);
  return rows.map((row) =>
    Object.fromEntries(Object.entries(row as Record<string, unknown>).map(([key, value]) => [snakeCase(key), value])),
  );
}

function snakeCase(key: string): string {
  if (key === 'ID') return 'id';
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** The project name compose derives from a directory, passed explicitly so every command agrees. */
export function composeProjectName(dir: string): string {
  return basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '');
}

interface Inspected {
  Id?: string;
  Image?: string;
  State?: { Running?: boolean; Status?: string };
  Config?: { Labels?: Record<string, string> | null };
}

class EngineCli {
  private composeCommand: Promise<{ file: string; args: string[] }> | undefined;

  constructor(
    private readonly engine: EngineName,
    private readonly options: EngineOptions,
  ) {}

  private tool(
    call: LuaCallContext,
    args: string[],
    extra: { cwd?: string; stdin?: string } = {},
  ): Promise<ToolResult> {
    return runTool(call, { file: this.options.bin ?? this.engine, args, env: this.options.env, ...extra });
  }

  private async must(call: LuaCallContext, what: string, args: string[], cwd?: string): Promise<ToolResult> {
    const result = await this.tool(call, args, { cwd });
    if (result.code !== 0) throw toolFailure(this.engine, what, result);
    return result;
  }

  async list(call: LuaCallContext, command: string[], _o: unknown, all: boolean): Promise<LuaValue> {
    const result = await this.must(call, command.join(' '), [
      ...command,
      ...(all ? ['-a'] : []),
      '--format',
      '{{json .}}',
    ]);
    return toLuaValue(parseListing(result.stdout));
  }

  /** The object, or null when there is none by that name. */
  async inspect(call: LuaCallContext, type: ObjectType, name: string): Promise<Inspected | null> {
    const result = await this.tool(call, [type, 'inspect', name]);
    if (result.code !== 0) {
      if (/no such|not found|no container with|unable to find|does not exist/i.test(result.stderr)) return null;
      throw toolFailure(this.engine, `inspect ${type} ${name}`, result);
    }
    const parsed = JSON.parse(result.stdout) as Inspected[];
    return parsed[0] ?? null;
  }

  async pull(call: LuaCallContext, image: string): Promise<LuaValue> {
    const before = await this.inspect(call, 'image', image);
    if (call.dryRun)
      return { changed: true, dry_run: true, present: before !== null, note: `dry-run: would pull ${image}` };
    await this.must(call, `pull ${image}`, ['pull', image]);
    const after = await this.inspect(call, 'image', image);
    return { changed: before?.Id !== after?.Id, id: after?.Id ?? null };
  }

  async build(call: LuaCallContext, context: string, opts: LuaValue): Promise<LuaValue> {
    const fn = `${this.engine}.build`;
    const o = readLuaOptions(fn, 2, opts, ['tag', 'file', 'build_args', 'pull']);
    const tag = luaOptionalString(fn, 'option tag', o.tag);
    if (!tag) throw new InvalidInputError(`${fn}: option tag is required (it is how a change is told)`);
    const args = ['build', '-t', tag];
    const file = luaOptionalString(fn, 'option file', o.file);
    if (file) args.push('-f', file);
    for (const [key, value] of Object.entries(luaStringMap(fn, 'option build_args', o.build_args)))
      args.push('--build-arg', `${key}=${value}`);
    if (luaOptionalBoolean(fn, 'option pull', o.pull)) args.push('--pull');
    args.push(context);
    const before = await this.inspect(call, 'image', tag);
    if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would build ${tag} from ${context}` };
    await this.must(call, `build ${tag}`, args);
    const after = await this.inspect(call, 'image', tag);
    return { changed: before?.Id !== after?.Id, id: after?.Id ?? null };
  }

  async remove(call: LuaCallContext, type: ObjectType, name: string, flags: string[]): Promise<LuaValue> {
    const existing = await this.inspect(call, type, name);
    if (existing === null) return { changed: false };
    if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would remove ${type} ${name}` };
    await this.must(call, `remove ${type} ${name}`, [type, 'rm', ...flags, name]);
    return { changed: true };
  }

  async run(call: LuaCallContext, image: string, opts: LuaValue): Promise<LuaValue> {
    const settings = readRunSettings(`${this.engine}.run`, image, opts);
    const hash = settingsHash(settings);
    const existing = await this.inspect(call, 'container', settings.name);
    const imageNow = await this.inspect(call, 'image', image);
    const matches =
      existing !== null &&
      existing.Config?.Labels?.[CONFIG_LABEL] === hash &&
      (imageNow === null || imageNow.Id === existing.Image);
    if (matches && existing.State?.Running) return { changed: false, id: existing.Id ?? null, action: 'none' };
    const action = matches ? 'start' : existing ? 'recreate' : 'create';
    if (call.dryRun)
      return { changed: true, dry_run: true, action, note: `dry-run: would ${action} container ${settings.name}` };
    if (matches) {
      await this.must(call, `start ${settings.name}`, ['start', settings.name]);
      return { changed: true, id: existing.Id ?? null, action };
    }
    if (existing) await this.must(call, `remove ${settings.name}`, ['rm', '-f', settings.name]);
    const created = await this.must(call, `run ${settings.name}`, runArguments(settings));
    return { changed: true, id: created.stdout.trim(), action };
  }

  async setRunning(call: LuaCallContext, name: string, running: boolean, flags: string[]): Promise<LuaValue> {
    const existing = await this.inspect(call, 'container', name);
    if (existing === null) throw new InvalidInputError(`${this.engine}: no container named ${name}`);
    if (Boolean(existing.State?.Running) === running) return { changed: false };
    const verb = running ? 'start' : 'stop';
    if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would ${verb} ${name}` };
    await this.must(call, `${verb} ${name}`, [verb, ...flags, name]);
    return { changed: true };
  }

  async restart(call: LuaCallContext, name: string): Promise<LuaValue> {
    if ((await this.inspect(call, 'container', name)) === null)
      throw new InvalidInputError(`${this.engine}: no container named ${name}`);
    if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would restart ${name}` };
    await this.must(call, `restart ${name}`, ['restart', name]);
    return { changed: true };
  }

  async exec(call: LuaCallContext, name: string, cmd: LuaValue, opts: LuaValue): Promise<LuaValue> {
    const fn = `${this.engine}.exec`;
    const o = readLuaOptions(fn, 3, opts, ['user', 'workdir', 'env', 'stdin']);
    const command = typeof cmd === 'string' ? ['sh', '-c', cmd] : luaStringList(fn, 'argument 2 (command)', cmd);
    if (command.length === 0) throw new InvalidInputError(`${fn}: argument 2 must not be an empty command`);
    const args = ['exec'];
    const stdin = luaOptionalString(fn, 'option stdin', o.stdin);
    if (stdin !== undefined) args.push('-i');
    const user = luaOptionalString(fn, 'option user', o.user);
    if (user) args.push('--user', user);
    const workdir = luaOptionalString(fn, 'option workdir', o.workdir);
    if (workdir) args.push('--workdir', workdir);
    for (const [key, value] of Object.entries(luaStringMap(fn, 'option env', o.env)))
      args.push('-e', `${key}=${value}`);
    args.push(name, ...command);
    if (call.dryRun) {
      return {
        stdout: '',
        stderr: '',
        exit_code: 0,
        success: true,
        changed: false,
        dry_run: true,
        note: `dry-run: would run in ${name}: ${command.join(' ')}`,
      };
    }
    const result = await this.tool(call, args, { stdin });
    // A command's effect cannot be seen from outside: like Ansible's command module, it counts as a change.
    return {
      stdout: result.stdout,
      stderr: result.stderr,
      exit_code: result.code,
      success: result.code === 0,
      changed: true,
    };
  }

  async logs(call: LuaCallContext, name: string, opts: LuaValue): Promise<LuaValue> {
    const fn = `${this.engine}.logs`;
    const o = readLuaOptions(fn, 2, opts, ['tail', 'since', 'timestamps']);
    const args = ['logs'];
    const tail = luaOptionalNumber(fn, 'option tail', o.tail);
    if (tail !== undefined) args.push('--tail', String(Math.round(tail)));
    const since = luaOptionalString(fn, 'option since', o.since);
    if (since) args.push('--since', since);
    if (luaOptionalBoolean(fn, 'option timestamps', o.timestamps)) args.push('--timestamps');
    const result = await this.must(call, `logs ${name}`, [...args, name]);
    return { stdout: result.stdout, stderr: result.stderr };
  }

  async createNetwork(call: LuaCallContext, name: string, opts: LuaValue): Promise<LuaValue> {
    const fn = `${this.engine}.network_create`;
    const o = readLuaOptions(fn, 2, opts, ['driver', 'internal', 'subnet', 'labels']);
    if ((await this.inspect(call, 'network', name)) !== null) return { changed: false };
    if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would create network ${name}` };
    const args = ['network', 'create'];
    const driver = luaOptionalString(fn, 'option driver', o.driver);
    if (driver) args.push('--driver', driver);
    if (luaOptionalBoolean(fn, 'option internal', o.internal)) args.push('--internal');
    const subnet = luaOptionalString(fn, 'option subnet', o.subnet);
    if (subnet) args.push('--subnet', subnet);
    for (const [key, value] of Object.entries(luaStringMap(fn, 'option labels', o.labels)))
      args.push('--label', `${key}=${value}`);
    const created = await this.must(call, `network create ${name}`, [...args, name]);
    return { changed: true, id: created.stdout.trim() };
  }

  async createVolume(call: LuaCallContext, name: string, opts: LuaValue): Promise<LuaValue> {
    const fn = `${this.engine}.volume_create`;
    const o = readLuaOptions(fn, 2, opts, ['driver', 'labels']);
    if ((await this.inspect(call, 'volume', name)) !== null) return { changed: false };
    if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would create volume ${name}` };
    const args = ['volume', 'create'];
    const driver = luaOptionalString(fn, 'option driver', o.driver);
    if (driver) args.push('--driver', driver);
    for (const [key, value] of Object.entries(luaStringMap(fn, 'option labels', o.labels)))
      args.push('--label', `${key}=${value}`);
    await this.must(call, `volume create ${name}`, [...args, name]);
    return { changed: true };
  }

  /** `docker compose` (the v2 plugin) when the CLI has it, else the standalone `docker-compose` / `podman-compose`. */
  private findCompose(call: LuaCallContext): Promise<{ file: string; args: string[] }> {
    this.composeCommand ??= this.tool(call, ['compose', 'version']).then(
      (r) =>
        r.code === 0
          ? { file: this.options.bin ?? this.engine, args: ['compose'] }
          : { file: `${this.engine}-compose`, args: [] },
      () => ({ file: `${this.engine}-compose`, args: [] }),
    );
    return this.composeCommand;
  }

  /** Each container of the project as `id:state`, sorted: what `compose` compares to tell a change. */
  private async projectContainers(call: LuaCallContext, project: string): Promise<string[]> {
    const result = await this.must(call, 'ps', [
      'ps',
      '-a',
      '--filter',
      `label=com.docker.compose.project=${project}`,
      '--format',
      '{{json .}}',
    ]);
    return parseListing(result.stdout)
      .map((row) => `${String(row.id)}:${String(row.state)}`)
      .sort();
  }

  async compose(call: LuaCallContext, verb: 'up' | 'down', dir: string, opts: LuaValue): Promise<LuaValue> {
    const fn = `${this.engine}.compose_${verb}`;
    const o = readLuaOptions(
      fn,
      2,
      opts,
      verb === 'up' ? ['file', 'project', 'services', 'build'] : ['file', 'project', 'volumes'],
    );
    const project = luaOptionalString(fn, 'option project', o.project) ?? composeProjectName(dir);
    const args = ['-p', project];
    for (const file of luaStringList(fn, 'option file', o.file)) args.push('-f', file);
    if (verb === 'up') {
      args.push('up', '-d');
      if (luaOptionalBoolean(fn, 'option build', o.build)) args.push('--build');
      args.push(...luaStringList(fn, 'option services', o.services));
    } else {
      args.push('down');
      if (luaOptionalBoolean(fn, 'option volumes', o.volumes)) args.push('-v');
    }
    const before = await this.projectContainers(call, project);
    if (call.dryRun) {
      return {
        changed: verb === 'down' ? before.length > 0 : true,
        dry_run: true,
        containers: before.length,
        note: `dry-run: would run compose ${args.join(' ')}`,
      };
    }
    const compose = await this.findCompose(call);
    const result = await runTool(call, {
      file: compose.file,
      args: [...compose.args, ...args],
      cwd: dir,
      env: this.options.env,
    });
    if (result.code !== 0) throw toolFailure(`${this.engine} compose`, verb, result);
    const after = await this.projectContainers(call, project);
    return { changed: before.join(',') !== after.join(','), project, containers: after.length };
  }
}
