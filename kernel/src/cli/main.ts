import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Command, CommanderError, Option } from 'commander';
import {
  closest,
  createRedactor,
  resolveConfig,
  isRunnerError,
  type CommandContext,
  type CommandSpec,
  type Profile,
  type Redactor,
  type RunnerConfig,
  type RunningKernel,
} from '@runner/plugin-sdk';
import { configDeclarers, pluginsDirsOf, readConfigSources, resolveDataDir } from '../config.js';
import { messageOf } from '../errors.js';
import { bootKernel } from '../kernel.js';
import { createLogger, type KernelLogger } from '../logger.js';
import { discoverPlugins, type DiscoveredPlugin } from '../plugin-discovery.js';
import { builtinPluginsDir, kernelVersion } from '../paths.js';
import { attachCommands, mergeCommands } from './command-tree.js';
import { prescanGlobals } from './global-options.js';
import { redactWrites } from './redacted-output.js';

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
}

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

/**
 * The `runner` command: discovers plugins, builds the command tree from their contributions and
 * runs the chosen command. Returns the exit code; errors are one line on stderr (with the stack
 * and causes under `--debug`).
 */
export async function main(
  argv: readonly string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env },
): Promise<number> {
  // Made first: what the command prints, error lines, the logger and every plugin pass it.
  const redactor = createRedactor();
  registerEnvironmentSecrets(redactor, io.env);
  const restoreWrites = redactWrites([io.stdout, io.stderr], redactor);
  try {
    return await runCommand(argv, io, redactor);
  } finally {
    restoreWrites();
  }
}

async function runCommand(argv: readonly string[], io: CliIo, redactor: Redactor): Promise<number> {
  const globals = prescanGlobals(argv);
  const fail = (error: unknown): number => {
    io.stderr.write(redactor.redactText(`runner: ${messageOf(error)}\n`));
    if (globals.debug) io.stderr.write(redactor.redactText(`${describeForDebug(error)}\n`));
    return isUsageError(error) ? EXIT_USAGE : EXIT_FAILURE;
  };

  const sources = (flags?: Record<string, unknown>) => ({
    dataDir: globals.dataDir,
    configFile: globals.configFile,
    env: io.env,
    debug: globals.debug,
    // --ca is config master.tls_cert for every command, as RUNNER_CA is.
    flags: globals.ca === undefined ? flags : { 'master.tls_cert': globals.ca, ...flags },
  });
  // A broken config must not hide `runner doctor`, which is how one finds out about it: the error
  // is kept, and only commands that tolerate it run.
  let configError: Error | undefined;
  const raw = await readConfigSources(sources()).catch((error: Error) => {
    configError = error;
    return { dataDir: resolveDataDir(globals.dataDir, io.env), entries: new Map() };
  });

  let plugins: DiscoveredPlugin[];
  let commands: CommandSpec[];
  let baseConfig: RunnerConfig;
  try {
    plugins = await discoverPlugins({
      builtinDir: io.env.RUNNER_BUILTIN_PLUGINS_DIR ?? builtinPluginsDir,
      extraDirs: [...globals.pluginsDirs, ...pluginsDirsOf(raw.entries)],
    });
    commands = mergeCommands(
      plugins.flatMap((p) => (p.plugin.commands ?? []).map((spec) => ({ spec, pluginId: p.plugin.id }))),
      plugins.flatMap((p) =>
        (p.plugin.commandOptions ?? []).map((extension) => ({ extension, pluginId: p.plugin.id })),
      ),
    );
    const declarers = configDeclarers(plugins);
    try {
      baseConfig = resolveConfig({ dataDir: raw.dataDir, entries: raw.entries, declarers });
    } catch (error) {
      if (!isRunnerError(error) || error.status !== 400) throw error;
      configError ??= error;
      baseConfig = resolveConfig({ dataDir: raw.dataDir, entries: new Map(), declarers });
    }
  } catch (error) {
    return fail(error);
  }
  const readConfig = async (flags?: Record<string, unknown>): Promise<RunnerConfig> => {
    const { dataDir, entries } = await readConfigSources(sources(flags));
    return resolveConfig({ dataDir, entries, declarers: configDeclarers(plugins) });
  };

  let exitCode = 0;
  const program = new Command('runner')
    .description('Workflow automation: run YAML + Lua workflows locally, or on agents coordinated by a master.')
    // Commander reads a program option after the subcommand too: a command with a `--version <n>`
    // of its own (`runner run <flow> --version 2`) would never see it.
    .version(kernelVersion, ownsVersion(commands, argv) ? '-V' : '-V, --version', 'print the runner version')
    .option('--data-dir <dir>', 'data directory (default: $RUNNER_DATA_DIR or ~/.runner)')
    .option('--config <file>', 'config file (default: <data-dir>/config.yaml)')
    .option('--plugins-dir <dir>', 'load plugins from this directory too (repeatable)')
    .option('--ca <file>', "trust this certificate (the master's or its CA) for an https:// master (RUNNER_CA)")
    .option('--debug', 'log at debug level and print stacks with errors')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Commander's own message, already one line; keep "runner:" as every other error has.
      outputError: (text, write) => write(`runner: ${withNearSuggestion(text.replace(/^error: /, ''))}`),
    });

  attachCommands(program, commands, kernelVersion, async (spec, command) => {
    const kernels: RunningKernel[] = [];
    let logger: KernelLogger | undefined;
    // A data directory this command creates (the log file does, at once) and whose kernel then
    // fails to boot (a busy port) is removed again: a typo'd --data-dir must not leave one behind.
    let createdDataDir: string | undefined;
    let bootFailed = false;
    try {
      if (configError && !spec.tolerateConfigError) throw configError;
      // Options with a configKey (an extension's `--port` on `runner server`) set their key for
      // this command, whichever plugin owns the command.
      const flagOverrides = configKeyOverrides(spec, command);
      const config = Object.keys(flagOverrides).length > 0 ? await readConfig(flagOverrides) : baseConfig;
      for (const warning of config.warnings) io.stderr.write(`runner: warning: ${warning}\n`);
      if (!existsSync(config.dataDir)) createdDataDir = config.dataDir;
      logger = await createLogger({
        dataDir: config.dataDir,
        level: config.debug ? 'debug' : 'info',
        terminal: io.stderr,
        terminalLevel: config.debug ? 'debug' : 'warn',
        redactor,
      });
      const activeLogger = logger;
      const context: CommandContext = {
        config,
        logger,
        stdout: io.stdout,
        stderr: io.stderr,
        stdin: io.stdin,
        isTTY: io.stdout.isTTY === true,
        plugins: plugins.map((p) => ({ descriptor: p.descriptor, luaModules: p.plugin.luaModules ?? [] })),
        commands,
        version: kernelVersion,
        redactor,
        configError,
        masterLocator: () => {
          const provider = plugins.find((p) => p.plugin.masterLocator)?.plugin.masterLocator;
          return provider ? provider() : Promise.resolve(undefined);
        },
        retentionPolicies: async (store) => {
          const lists = await Promise.all(plugins.map((p) => p.plugin.retention?.(store, config) ?? []));
          return lists.flat();
        },
        doctorChecks: async () => {
          const lists = await Promise.all(plugins.map((p) => p.plugin.doctor?.(context) ?? []));
          return lists.flat();
        },
        schemas: async () => {
          const lists = await Promise.all(plugins.map((p) => p.plugin.schema?.() ?? []));
          return lists.flat();
        },
        boot: async (profile, overrides) => {
          const bootConfig = await readConfig({ ...flagOverrides, ...overrides });
          // Long-running profiles report their progress on the terminal; one-shot commands stay quiet.
          if (profile !== 'embedded') activeLogger.setTerminalLevel(bootConfig.debug ? 'debug' : 'info');
          const kernel = await bootKernel({
            profile: profile as Profile,
            plugins,
            config: bootConfig,
            logger: activeLogger,
            kernelVersion,
            redactor,
          }).catch((error: unknown) => {
            bootFailed = true;
            throw error;
          });
          kernels.push(kernel);
          return kernel;
        },
      };
      const processed = command.processedArgs.flatMap((a: unknown) =>
        Array.isArray(a) ? a : a === undefined ? [] : [a],
      ) as string[];
      exitCode = (await spec.run?.({ args: processed, options: command.opts() }, context)) ?? 0;
    } catch (error) {
      exitCode = fail(error);
    } finally {
      for (const kernel of kernels.reverse()) {
        try {
          await kernel.stop('command finished');
        } catch (error) {
          exitCode = exitCode || fail(error);
        }
      }
      await logger?.flush();
      if (bootFailed && createdDataDir !== undefined && kernels.length === 0) {
        await rm(createdDataDir, { recursive: true, force: true });
        io.stderr.write(`runner: removed ${createdDataDir}, created by this command that could not start\n`);
      }
    }
  });

  if (argv.length === 0) {
    // `runner` alone is a request to see what it can do, not a mistake.
    io.stdout.write(program.helpInformation());
    return 0;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      // Unknown command or option, missing argument, a group without its subcommand: usage errors.
      return EXIT_USAGE;
    }
    return fail(error);
  }
  return exitCode;
}

/**
 * Commander offers any command within three edits (`agent` for `events`, `server` for `secret`);
 * its suggestion is kept only when it is near for the word's length, as every did-you-mean of
 * runner is (plugin-sdk `closest`).
 */
export function withNearSuggestion(message: string): string {
  const match = /^unknown (?:command|option) '([^']+)'\n\(Did you mean ([^?]+)\?\)\n?$/.exec(message);
  if (!match) return message;
  const [, typed, offered] = match;
  return closest(typed, [offered]) === offered ? message : message.replace(/\n\(Did you mean [^?]+\?\)/, '');
}

/** The values the user gave to options that name a config key, keyed by that key. */
function configKeyOverrides(spec: CommandSpec, command: Command): Record<string, unknown> {
  const overrides: Record<string, unknown> = {};
  for (const option of spec.options ?? []) {
    if (!option.configKey) continue;
    const name = new Option(option.flags).attributeName();
    // A default is not the user's choice: config.yaml and RUNNER_* still apply then.
    if (command.getOptionValueSource(name) === 'default') continue;
    const value = command.getOptionValue(name) as unknown;
    if (value !== undefined) overrides[option.configKey] = value;
  }
  return overrides;
}

/**
 * Exit code 2 is for input the command refused before acting: the InvalidInput kind (HTTP 400),
 * whatever its specific code. A workflow that does not validate (`invalid_workflow`) is bad input
 * like a bad `--var`, and a script can tell it from a run that failed (1).
 */
function isUsageError(error: unknown): boolean {
  return isRunnerError(error) && (error.code === 'invalid_input' || error.status === 400);
}

/**
 * Credentials handed to the process by environment (`RUNNER_TOKEN`, `RUNNER_JOIN_TOKEN`, any
 * `RUNNER_*` variable whose name says token, password or secret) are registered with the
 * redactor, so no log line, record or answer repeats them.
 */
export function registerEnvironmentSecrets(redactor: Redactor, env: NodeJS.ProcessEnv): void {
  for (const [name, value] of Object.entries(env)) {
    if (value && name.startsWith('RUNNER_') && redactor.isSecretKey(name.slice('RUNNER_'.length)))
      redactor.addSecret(value);
  }
}

function describeForDebug(error: unknown): string {
  const lines: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 8; depth++) {
    lines.push(current instanceof Error ? (current.stack ?? current.message) : String(current));
    current = current instanceof Error ? current.cause : undefined;
    if (current !== undefined) lines.push('caused by:');
  }
  return lines.join('\n');
}

export { resolveDataDir };

/** Whether the command argv names (`run`, `flow run`) declares a `--version` option of its own. */
function ownsVersion(commands: readonly CommandSpec[], argv: readonly string[]): boolean {
  let specs = commands;
  let spec: CommandSpec | undefined;
  for (const word of argv.filter((arg) => !arg.startsWith('-'))) {
    const next = specs.find((c) => c.name === word || c.aliases?.includes(word));
    if (!next) break;
    spec = next;
    specs = next.subcommands ?? [];
  }
  return (spec?.options ?? []).some((o) => /(^|[ ,])--version\b/.test(o.flags));
}
