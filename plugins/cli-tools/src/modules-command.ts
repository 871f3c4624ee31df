import {
  formatTable,
  luaSignature,
  NotFoundError,
  type CommandContext,
  type LuaModuleSpec,
  type PluginDescriptor,
} from '@runner/plugin-sdk';

interface ModuleRow {
  module: LuaModuleSpec;
  plugin: PluginDescriptor;
}

/** Every Lua module declared by a discovered plugin, by name. */
export function declaredModules(ctx: Pick<CommandContext, 'plugins'>): ModuleRow[] {
  return ctx.plugins
    .flatMap((p) => p.luaModules.map((module) => ({ module, plugin: p.descriptor })))
    .sort((a, b) => a.module.name.localeCompare(b.module.name));
}

/** One row of `runner modules list`. */
export interface ModuleListRow {
  name: string;
  plugin: string;
  version: string;
  origin: string;
  description: string;
  functions: string[];
}

export function listModules(ctx: Pick<CommandContext, 'plugins'>): ModuleListRow[] {
  return declaredModules(ctx).map(({ module, plugin }) => ({
    name: module.name,
    plugin: plugin.id,
    version: plugin.version,
    origin: plugin.origin,
    description: module.description,
    functions: Object.keys(module.functions),
  }));
}

export function moduleTable(rows: readonly ModuleListRow[]): string {
  if (rows.length === 0) return 'no Lua modules are installed\n';
  return formatTable(
    ['MODULE', 'PLUGIN', 'VERSION', 'FUNCTIONS', 'DESCRIPTION'],
    rows.map((r) => [r.name, r.plugin, r.version, String(r.functions.length), r.description]),
  );
}

/** `runner modules info <name>`: the module with its plugin and every function's documentation. */
export function moduleInfo(ctx: Pick<CommandContext, 'plugins'>, name: string) {
  const rows = declaredModules(ctx);
  const row = rows.find((r) => r.module.name === name);
  if (!row) {
    const known = rows.map((r) => r.module.name).join(', ') || 'none';
    throw new NotFoundError(`unknown module "${name}" (installed: ${known})`);
  }
  const { module, plugin } = row;
  return {
    name: module.name,
    plugin: plugin.id,
    version: plugin.version,
    origin: plugin.origin,
    source: plugin.source,
    description: module.description,
    docs: module.docs,
    functions: module.functions,
  };
}

export function moduleText(info: ReturnType<typeof moduleInfo>): string {
  const out: string[] = [
    `${info.name}: ${info.description}`,
    `plugin ${info.plugin} ${info.version} (${info.origin}, ${info.source})`,
  ];
  if (info.docs) out.push('', info.docs.trim());
  out.push('', 'Functions:');
  for (const [fnName, spec] of Object.entries(info.functions)) {
    out.push('', `  ${info.name}.${luaSignature(fnName, spec)}`);
    const args = spec.args.map((a) => `${a.name}: ${a.type}${a.optional ? ' (optional)' : ''}`);
    out.push(`      arguments: ${args.length === 0 ? 'none' : args.join('; ')}`);
    out.push(`      result: ${spec.result}`);
    out.push(`      side effects: ${spec.sideEffects ? 'yes (skipped in dry-run)' : 'no'}`);
    if (spec.callsLua)
      out.push('      calls Lua back: yes (a script calling it runs in a worker under lua.isolation: auto)');
    out.push(...spec.description.split('\n').map((l) => `      ${l}`));
    if (spec.example)
      out.push(
        '      example:',
        ...spec.example
          .trim()
          .split('\n')
          .map((l) => `        ${l}`),
      );
  }
  return `${out.join('\n')}\n`;
}
