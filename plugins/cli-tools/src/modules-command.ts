import {
  formatTable,
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

export function listModules(ctx: CommandContext, json: boolean): void {
  const rows = declaredModules(ctx);
  if (json) {
    for (const { module, plugin } of rows) {
      ctx.stdout.write(
        `${JSON.stringify({ name: module.name, plugin: plugin.id, version: plugin.version, origin: plugin.origin, description: module.description, functions: Object.keys(module.functions) })}\n`,
      );
    }
    return;
  }
  if (rows.length === 0) {
    ctx.stdout.write('no Lua modules are installed\n');
    return;
  }
  ctx.stdout.write(
    formatTable(
      ['MODULE', 'PLUGIN', 'VERSION', 'FUNCTIONS', 'DESCRIPTION'],
      rows.map(({ module, plugin }) => [
        module.name,
        plugin.id,
        plugin.version,
        String(Object.keys(module.functions).length),
        module.description,
      ]),
    ),
  );
}

export function moduleInfo(ctx: CommandContext, name: string, json: boolean): void {
  const rows = declaredModules(ctx);
  const row = rows.find((r) => r.module.name === name);
  if (!row) {
    const known = rows.map((r) => r.module.name).join(', ') || 'none';
    throw new NotFoundError(`unknown module "${name}" (installed: ${known})`);
  }
  const { module, plugin } = row;
  if (json) {
    ctx.stdout.write(
      `${JSON.stringify({ name: module.name, plugin: plugin.id, version: plugin.version, source: plugin.source, description: module.description, docs: module.docs, functions: module.functions })}\n`,
    );
    return;
  }
  const out: string[] = [
    `${module.name}: ${module.description}`,
    `plugin ${plugin.id} ${plugin.version} (${plugin.origin}, ${plugin.source})`,
  ];
  if (module.docs) out.push('', module.docs.trim());
  out.push('', 'Functions:');
  for (const spec of Object.values(module.functions)) {
    out.push(
      '',
      `  ${module.name}.${spec.signature}${spec.sideEffects ? '   [side effects: skipped in dry-run]' : ''}`,
    );
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
  ctx.stdout.write(`${out.join('\n')}\n`);
}
