import { defineLuaModule } from '@runner/plugin-sdk';

const OBJECT = 'string';
const CHANGED = '{changed, dry_run?, note?}';

/** The functions docker and podman share (their command lines are the same); `e` is the module's name. */
function engineFunctions(e: 'docker' | 'podman') {
  return {
    images: {
      args: [],
      result: 'table[]',
      callsLua: false,
      sideEffects: false,
      description: `The local images: a list of { id, repository, tag, size, created_at, ... } as \`${e} image ls\` reports them.`,
    },
    containers: {
      args: [{ name: 'opts', type: '{all?: boolean}', optional: true }],
      result: 'table[]',
      callsLua: false,
      sideEffects: false,
      description:
        'The running containers (all of them with opts.all): { id, names, image, state, status, ports, ... }.',
    },
    inspect: {
      args: [
        { name: 'name', type: OBJECT },
        { name: 'opts', type: '{type?: "container"|"image"|"network"|"volume"}', optional: true },
      ],
      result: 'table|nil',
      callsLua: false,
      sideEffects: false,
      description: `The engine's full description of a container (or of the image, network or volume named by opts.type), or nil when there is none by that name.`,
    },
    pull: {
      args: [{ name: 'image', type: 'string' }],
      result: '{changed, id}',
      callsLua: false,
      sideEffects: true,
      description: 'Pulls an image; changed when the local image it names is another than before.',
      example: `${e}.pull("nginx:1.27")`,
    },
    build: {
      args: [
        { name: 'context', type: 'string' },
        { name: 'opts', type: '{tag: string, file?: string, build_args?: table, pull?: boolean}' },
      ],
      result: '{changed, id}',
      callsLua: false,
      sideEffects: true,
      description:
        'Builds an image from a directory and tags it; changed when the tag now names another image (a build the cache fully served changes nothing).',
      example: `${e}.build("/srv/app", { tag = "app:latest", build_args = { VERSION = vars.version } })`,
    },
    remove_image: {
      args: [
        { name: 'image', type: 'string' },
        { name: 'opts', type: '{force?: boolean}', optional: true },
      ],
      result: CHANGED,
      callsLua: false,
      sideEffects: true,
      description: 'Removes an image; changed = false when there was none.',
    },
    run: {
      args: [
        { name: 'image', type: 'string' },
        {
          name: 'opts',
          type: '{name: string, command?: string[], env?: table, ports?: string[], volumes?: string[], network?: string, restart?: string, labels?: table, user?: string, workdir?: string, entrypoint?: string, hostname?: string}',
        },
      ],
      result: '{changed, id, action}',
      callsLua: false,
      sideEffects: true,
      description: `Makes a container named opts.name run image with these settings, detached. The settings' hash is
kept in the label io.runner.config: a second call with the same settings and the same local image
finds the container and changes nothing (action = "none"); a stopped one is started ("start"); other
settings or a newer image replace it ("recreate"); none yet: "create". ports are "8080:80", volumes
"/host:/container[:ro]" or "name:/path", as on the command line.`,
      example: `local r = ${e}.run("nginx:1.27", { name = "web", ports = { "8080:80" }, restart = "unless-stopped",
  volumes = { "/srv/www:/usr/share/nginx/html:ro" } })
if r.changed then log.info("web (re)started", { action = r.action }) end`,
    },
    start: {
      args: [{ name: 'container', type: 'string' }],
      result: CHANGED,
      callsLua: false,
      sideEffects: true,
      description: 'Starts a container; changed = false when it was running. Raises when there is no such container.',
    },
    stop: {
      args: [
        { name: 'container', type: 'string' },
        { name: 'opts', type: '{timeout?: number}', optional: true },
      ],
      result: CHANGED,
      callsLua: false,
      sideEffects: true,
      description:
        'Stops a container (opts.timeout seconds before it is killed); changed = false when it was not running.',
    },
    restart: {
      args: [{ name: 'container', type: 'string' }],
      result: CHANGED,
      callsLua: false,
      sideEffects: true,
      description: 'Restarts a container: always a change.',
    },
    remove: {
      args: [
        { name: 'container', type: 'string' },
        { name: 'opts', type: '{force?: boolean, volumes?: boolean}', optional: true },
      ],
      result: CHANGED,
      callsLua: false,
      sideEffects: true,
      description:
        'Removes a container (opts.force: even running; opts.volumes: its anonymous volumes too); changed = false when there was none.',
    },
    exec: {
      args: [
        { name: 'container', type: 'string' },
        { name: 'cmd', type: 'string|string[]' },
        { name: 'opts', type: '{user?: string, workdir?: string, env?: table, stdin?: string}', optional: true },
      ],
      result: '{stdout, stderr, exit_code, success, changed}',
      callsLua: false,
      sideEffects: true,
      description: `Runs a command in a running container: a string through sh -c, a list as it is. Never raises
because of the command's exit status. changed is always true, as with Ansible's command module:
what a command did cannot be seen from outside. In dry-run nothing runs.`,
      example: `local r = ${e}.exec("db", { "pg_isready" })
if not r.success then error("database not ready: " .. r.stderr) end`,
    },
    logs: {
      args: [
        { name: 'container', type: 'string' },
        { name: 'opts', type: '{tail?: number, since?: string, timestamps?: boolean}', optional: true },
      ],
      result: '{stdout, stderr}',
      callsLua: false,
      sideEffects: false,
      description:
        'What the container wrote, each stream apart; opts.tail: the last n lines; opts.since: "10m" or a time.',
    },
    networks: {
      args: [],
      result: 'table[]',
      callsLua: false,
      sideEffects: false,
      description: 'The networks: { id, name, driver, scope, ... }.',
    },
    network_create: {
      args: [
        { name: 'name', type: 'string' },
        {
          name: 'opts',
          type: '{driver?: string, internal?: boolean, subnet?: string, labels?: table}',
          optional: true,
        },
      ],
      result: '{changed, id?}',
      callsLua: false,
      sideEffects: true,
      description: 'Creates a network; changed = false when one by that name exists (its settings are not compared).',
    },
    network_remove: {
      args: [{ name: 'name', type: 'string' }],
      result: CHANGED,
      callsLua: false,
      sideEffects: true,
      description: 'Removes a network; changed = false when there was none.',
    },
    volumes: {
      args: [],
      result: 'table[]',
      callsLua: false,
      sideEffects: false,
      description: 'The volumes: { name, driver, mountpoint, ... }.',
    },
    volume_create: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'opts', type: '{driver?: string, labels?: table}', optional: true },
      ],
      result: CHANGED,
      callsLua: false,
      sideEffects: true,
      description: 'Creates a named volume; changed = false when it exists.',
    },
    volume_remove: {
      args: [{ name: 'name', type: 'string' }],
      result: CHANGED,
      callsLua: false,
      sideEffects: true,
      description: 'Removes a volume and its data; changed = false when there was none.',
    },
    compose_up: {
      args: [
        { name: 'dir', type: 'string' },
        {
          name: 'opts',
          type: '{file?: string|string[], project?: string, services?: string[], build?: boolean}',
          optional: true,
        },
      ],
      result: '{changed, project, containers}',
      callsLua: false,
      sideEffects: true,
      description: `\`compose up -d\` in dir (the compose v2 plugin when the CLI has it, else ${e}-compose). changed
when the project's containers (their ids and states) differ afterwards: an up with nothing to do
changes nothing. The project name is opts.project or the directory's name, as compose derives it.`,
      example: `${e}.compose_up("/srv/stack", { build = true })`,
    },
    compose_down: {
      args: [
        { name: 'dir', type: 'string' },
        { name: 'opts', type: '{file?: string|string[], project?: string, volumes?: boolean}', optional: true },
      ],
      result: '{changed, project, containers}',
      callsLua: false,
      sideEffects: true,
      description: '`compose down` in dir (opts.volumes: with its volumes); changed when containers were removed.',
    },
  } as const;
}

const engineDocs = (e: string, variable: string) => `
Drives the ${e} command line (found on PATH), so it works wherever \`${e}\` does: a local engine, or a
remote one through ${variable} or a context. Every function that changes something returns changed,
true only when something changed; in dry-run they only read (inspect) and report
{ changed = <would change>, dry_run = true, note = "dry-run: would ..." }. Names are container,
image, network or volume names (or ids). Errors name the command and carry the engine's message.
Credentials for registries come from the engine's own login (\`${e} login\` ahead of time); none
is taken as an argument or logged.`;

export const dockerModule = defineLuaModule({
  name: 'docker',
  description: 'Docker: images, containers, exec, logs, networks, volumes, compose up/down',
  docs: engineDocs('docker', 'DOCKER_HOST'),
  functions: engineFunctions('docker'),
});

export const podmanModule = defineLuaModule({
  name: 'podman',
  description: 'Podman: images, containers, exec, logs, networks, volumes, compose up/down',
  docs: engineDocs('podman', 'CONTAINER_HOST'),
  functions: engineFunctions('podman'),
});
