import type { RunnerConfig } from './config.js';
import type { EventBus } from './events.js';
import type { PluginDescriptor } from './lifecycle.js';
import type { LuaModuleSpec } from './lua-module.js';
import type { Logger } from './logger.js';
import type { ServiceRef } from './service-ref.js';

/** A positional argument of a command. */
export interface CommandArgument {
  name: string;
  description: string;
  required?: boolean;
  /** Takes every remaining argument. */
  variadic?: boolean;
  /** Values offered by shell completion. */
  choices?: string[];
}

/** An option of a command, in commander's flag syntax: `-o, --output <path>`, `--compress`. */
export interface CommandOption {
  flags: string;
  description: string;
  default?: string | boolean | number | string[];
  choices?: string[];
  /** Converts the raw string; throw InvalidInputError to refuse it. */
  parse?: (value: string, previous: unknown) => unknown;
  /**
   * The config key the option sets (`--port` sets `agent.port`): its value becomes a boot override
   * for that key, so the plugin that reads the key sees it whichever plugin owns the command.
   */
  configKey?: string;
}

/**
 * Options a plugin adds to a command another plugin owns (the agent transport adds `--port` and
 * its TLS flags to `runner server`). `command` is the command's path: `server`, `agent start`.
 * Two plugins declaring the same option on one command is a boot error naming both.
 */
export interface CommandExtension {
  command: string;
  options: CommandOption[];
}

/** What a command's handler receives. Options are camelCased (`--dry-run` becomes `dryRun`). */
export interface CommandInput {
  args: string[];
  options: Record<string, unknown>;
}

/** A kernel booted by a command, with the plugins of one profile set up. */
export interface RunningKernel {
  readonly profile: string;
  readonly events: EventBus;
  readonly config: RunnerConfig;
  readonly logger: Logger;
  get<T>(ref: ServiceRef<T>): T;
  find<T>(ref: ServiceRef<T>): T | undefined;
  /** Stops every plugin in reverse order; resolves when all stops ended. Idempotent. */
  stop(reason?: string): Promise<void>;
  /** Resolves once SIGINT or SIGTERM arrived and the kernel stopped. */
  stopOnSignal(): Promise<void>;
}

/** Everything a command handler may use. */
export interface CommandContext {
  config: RunnerConfig;
  logger: Logger;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  /** True when stdout is a terminal (live views, colours, confirmation prompts). */
  isTTY: boolean;
  /** Every discovered plugin with its Lua modules, whether or not a profile would load it. */
  plugins: readonly { descriptor: PluginDescriptor; luaModules: readonly LuaModuleSpec[] }[];
  /** Masks secrets in what a command prints (the kernel's one redactor). */
  redactor: import('./redactor.js').Redactor;
  /** The full command tree, for completion scripts. */
  commands: readonly CommandSpec[];
  /**
   * Boots the plugins of a profile (`master`, `agent`, `embedded`). `overrides` are dotted config
   * keys taken from the command's flags (e.g. `{ 'http.port': 8081 }`); they win over every other
   * source.
   */
  boot(profile: string, overrides?: Record<string, unknown>): Promise<RunningKernel>;
  /** The runner version (the kernel package's). */
  version: string;
  /**
   * Asks a master by its gRPC address where its REST API is (`findMaster` uses it for
   * `master.address`); loaded on first use from the plugin that declares `masterLocator`,
   * undefined when none does. Commands need not boot a kernel for it.
   */
  masterLocator?: () => Promise<import('./master-client.js').MasterLocator | undefined>;
  /**
   * The retention policies every discovered plugin declares (`retention` in its definition),
   * built over `store` without booting anything: what a master on this data directory would
   * run. For reports only (`runner db stats`): nothing here prunes unless registered and started.
   */
  retentionPolicies?: (store: import('./store.js').Store) => Promise<import('./store.js').RetentionPolicy[]>;
  /** The checks every discovered plugin contributes to `runner doctor` (`doctor` in its definition). */
  doctorChecks?: () => Promise<DoctorCheck[]>;
  /** Every discovered plugin's `schema` declaration: the migrations of every table (`runner db copy`). */
  schemas?: () => Promise<import('./store.js').StoreSchema[]>;
  /**
   * Set when the config file or a RUNNER_* variable is invalid. `config` then holds defaults only;
   * only commands with `tolerateConfigError` run in that state (`runner doctor`).
   */
  configError?: Error;
}

/** One line of `runner doctor`: what was checked, what was found, and what to do about it. */
export interface DoctorCheck {
  name: string;
  status: 'ok' | 'info' | 'warn' | 'fail';
  detail: string;
  /** What to do about it, for anything but ok. */
  fix?: string;
}

/**
 * A node of the `runner` command tree. Plugins contribute top-level commands, or subcommands of a
 * top-level command another plugin also contributes (`db` is shared by name).
 */
export interface CommandSpec {
  name: string;
  description: string;
  aliases?: string[];
  arguments?: CommandArgument[];
  options?: CommandOption[];
  subcommands?: CommandSpec[];
  /**
   * A command a coming feature will provide, with what it will do: hidden from help and
   * did-you-mean, it answers that it is not built yet. A plugin that contributes the command for
   * real replaces it.
   */
  planned?: string;
  /** Runs even when the configuration is invalid (see `CommandContext.configError`). */
  tolerateConfigError?: boolean;
  /** Returns the exit code (0 when omitted). Throw a RunnerError for a one-line error. */
  run?: (input: CommandInput, ctx: CommandContext) => Promise<number | void> | number | void;
}
