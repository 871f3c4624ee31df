import { Command, Option } from 'commander';
import type { CommandExtension, CommandOption, CommandSpec } from '@runner/plugin-sdk';
import { RunnerError } from '@runner/plugin-sdk';
import { PluginGraphError } from '../errors.js';

/** A command spec with the plugin that contributed it, for conflict messages. */
export interface ContributedCommand {
  spec: CommandSpec;
  pluginId: string;
}

/** Options a plugin adds to a command another plugin owns, with that plugin. */
export interface ContributedExtension {
  extension: CommandExtension;
  pluginId: string;
}

/**
 * Merges the plugins' contributions into one tree. Two plugins may share a parent (`db`) but not
 * a command that runs something; that conflict names both plugins. Then each extension's options
 * are added to the command it names; an option whose flag the command already has is a conflict
 * naming both plugins. An extension of a command no loaded plugin contributes is dropped: its
 * owner may be an external plugin that is absent here.
 */
export function mergeCommands(
  contributions: readonly ContributedCommand[],
  extensions: readonly ContributedExtension[] = [],
): CommandSpec[] {
  const owners = new Map<string, string>();
  const merge = (into: CommandSpec[], spec: CommandSpec, pluginId: string, path: string): void => {
    const here = `${path}${spec.name}`;
    const existing = into.find((c) => c.name === spec.name);
    // A planned command gives way to the real one, whichever plugin came first.
    if (existing && spec.planned) return;
    if (existing?.planned) into.splice(into.indexOf(existing), 1);
    if (!existing || existing.planned) {
      into.push({ ...spec, subcommands: [] });
      owners.set(here, pluginId);
      const added = into[into.length - 1];
      for (const sub of spec.subcommands ?? []) merge(added.subcommands as CommandSpec[], sub, pluginId, `${here} `);
      return;
    }
    if (existing.run && spec.run) {
      throw new PluginGraphError(
        'command_duplicate',
        `command "runner ${here}" is contributed by both plugin ${owners.get(here)} and plugin ${pluginId}`,
        {
          pluginId,
        },
      );
    }
    if (spec.run) Object.assign(existing, { ...spec, subcommands: existing.subcommands });
    for (const sub of spec.subcommands ?? []) merge(existing.subcommands as CommandSpec[], sub, pluginId, `${here} `);
  };
  const tree: CommandSpec[] = [];
  for (const { spec, pluginId } of contributions) merge(tree, spec, pluginId, '');
  extend(tree, extensions, owners);
  const sort = (list: CommandSpec[]) => {
    // Code-unit order, not localeCompare: the names are kebab-case ASCII, where both agree, and the
    // first localeCompare of a process loads ICU's collation data (15-45 ms on every command).
    list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const c of list) sort((c.subcommands ?? []) as CommandSpec[]);
  };
  sort(tree);
  return tree;
}

function extend(tree: CommandSpec[], extensions: readonly ContributedExtension[], owners: Map<string, string>): void {
  // Which plugin declared each flag of each command, for the conflict message.
  const flagOwners = new Map<string, string>();
  for (const { extension, pluginId } of extensions) {
    const path = extension.command.trim().split(/\s+/);
    let target: CommandSpec | undefined;
    let list: readonly CommandSpec[] = tree;
    for (const name of path) {
      target = list.find((c) => c.name === name);
      list = target?.subcommands ?? [];
    }
    if (!target) continue;
    const here = path.join(' ');
    for (const own of target.options ?? []) {
      for (const flag of flagNames(own))
        flagOwners.set(`${here} ${flag}`, flagOwners.get(`${here} ${flag}`) ?? owners.get(here) ?? '?');
    }
    for (const option of extension.options) {
      for (const flag of flagNames(option)) {
        const other = flagOwners.get(`${here} ${flag}`);
        if (other !== undefined) {
          throw new PluginGraphError(
            'command_option_duplicate',
            `option ${flag} of "runner ${here}" is declared by both plugin ${other} and plugin ${pluginId}`,
            { pluginId, details: { command: here, option: flag, plugins: [other, pluginId] } },
          );
        }
        flagOwners.set(`${here} ${flag}`, pluginId);
      }
    }
    Object.assign(target, { options: [...(target.options ?? []), ...extension.options] });
  }
}

/** `-p, --port <n>` -> `-p`, `--port`. */
export function flagNames(option: CommandOption): string[] {
  return option.flags.split(/[ ,|]+/).filter((part) => part.startsWith('-'));
}

/** Adds the tree to a commander program; every command also answers `--help` and `--version`. */
export function attachCommands(
  parent: Command,
  specs: readonly CommandSpec[],
  version: string,
  run: (spec: CommandSpec, command: Command) => Promise<void>,
): void {
  for (const spec of specs) {
    if (spec.planned) {
      attachPlanned(parent, spec);
      continue;
    }
    // A command with a `--version <n>` of its own (`runner run <flow> --version 2`) keeps `-V` alone.
    const ownVersion = (spec.options ?? []).some((o) => /(^|[ ,])--version\b/.test(o.flags));
    const command = parent
      .command(spec.name)
      .description(spec.description)
      .version(version, ownVersion ? '-V' : '-V, --version', 'print the runner version');
    for (const alias of spec.aliases ?? []) command.alias(alias);
    for (const arg of spec.arguments ?? []) {
      const name = arg.variadic ? `${arg.name}...` : arg.name;
      const argument = command.createArgument(arg.required === false ? `[${name}]` : `<${name}>`, arg.description);
      if (arg.choices) argument.choices(arg.choices);
      command.addArgument(argument);
    }
    for (const opt of spec.options ?? []) {
      const option = new Option(opt.flags, opt.description);
      if (opt.default !== undefined) option.default(opt.default);
      if (opt.choices) option.choices(opt.choices);
      if (opt.parse) option.argParser(opt.parse as (value: string, previous: unknown) => unknown);
      command.addOption(option);
    }
    if (spec.subcommands && spec.subcommands.length > 0) attachCommands(command, spec.subcommands, version, run);
    if (spec.run) command.action(async (...args: unknown[]) => run(spec, args[args.length - 1] as Command));
  }
}

/** A planned command: hidden, and whatever it is given, it says that it is not built yet (exit 1). */
function attachPlanned(parent: Command, spec: CommandSpec): void {
  const command = parent.command(spec.name, { hidden: true });
  for (const alias of spec.aliases ?? []) command.alias(alias);
  command
    .argument('[args...]')
    .allowUnknownOption()
    .helpOption(false)
    .action(() => {
      throw new RunnerError(
        'not_built',
        `runner ${spec.name} is not built yet: ${spec.planned} (planned; the README lists what is not built yet)`,
        { status: 501 },
      );
    });
}
