import { Command, Option } from 'commander';
import type { CommandSpec } from '@runner/plugin-sdk';
import { PluginGraphError } from '../errors.js';

/** A command spec with the plugin that contributed it, for conflict messages. */
export interface ContributedCommand {
  spec: CommandSpec;
  pluginId: string;
}

/**
 * Merges the plugins' contributions into one tree. Two plugins may share a parent (`db`) but not
 * a command that runs something; that conflict names both plugins.
 */
export function mergeCommands(contributions: readonly ContributedCommand[]): CommandSpec[] {
  const owners = new Map<string, string>();
  const merge = (into: CommandSpec[], spec: CommandSpec, pluginId: string, path: string): void => {
    const here = `${path}${spec.name}`;
    const existing = into.find((c) => c.name === spec.name);
    if (!existing) {
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
  const sort = (list: CommandSpec[]) => {
    list.sort((a, b) => a.name.localeCompare(b.name));
    for (const c of list) sort((c.subcommands ?? []) as CommandSpec[]);
  };
  sort(tree);
  return tree;
}

/** Adds the tree to a commander program; every command also answers `--help` and `--version`. */
export function attachCommands(
  parent: Command,
  specs: readonly CommandSpec[],
  version: string,
  run: (spec: CommandSpec, command: Command) => Promise<void>,
): void {
  for (const spec of specs) {
    const command = parent
      .command(spec.name)
      .description(spec.description)
      .version(version, '-V, --version', 'print the runner version');
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
