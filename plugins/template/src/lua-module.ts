import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  defineLuaModule,
  InvalidInputError,
  NotFoundError,
  TEMPLATE_SYNTAXES,
  type LuaModuleImplementation,
  type LuaValue,
  type TemplateContext,
  type TemplateEngine,
  type TemplateSyntax,
} from '@runner/plugin-sdk';

/** The `template` Lua module's declaration: static, so `runner modules info template` needs no setup. */
export const templateModule = defineLuaModule({
  name: 'template',
  description: 'Render Jinja (nunjucks) or Go text/template templates from Lua.',
  docs: [
    "The context is the table you pass: a script's globals are not visible unless you pass them,",
    'e.g. template.render(src, { vars = vars, item = item }).',
    'opts.syntax is "jinja" (default) or "go"; opts.name names the template in error messages.',
    'A variable missing from the context is an error naming it and its line and column, never an',
    'empty string; use `default` (both syntaxes) or `is defined` (jinja) for optional values.',
    'No HTML escaping is done. See plugins/template/README.md for filters and functions.',
  ].join('\n'),
  functions: {
    render: {
      args: [
        { name: 'source', type: 'string' },
        { name: 'context', type: 'table', optional: true },
        { name: 'opts', type: '{syntax?: "jinja"|"go", name?: string}', optional: true },
      ],
      result: 'string',
      callsLua: false,
      description: 'Renders a template string with the given context table.',
      sideEffects: false,
      example: [
        'local cmd = template.render("deploy {{ app }} to {{ hosts | join(\',\') }}",',
        '  { app = vars.app, hosts = { "web-1", "web-2" } })',
        'local go = template.render("{{ .app | upper }}", { app = "web" }, { syntax = "go" })',
      ].join('\n'),
    },
    render_file: {
      args: [
        { name: 'path', type: 'string' },
        { name: 'context', type: 'table', optional: true },
        { name: 'opts', type: '{syntax?: "jinja"|"go", name?: string}', optional: true },
      ],
      result: 'string',
      callsLua: false,
      description:
        "Reads a UTF-8 template file (a relative path is resolved against runner's working directory) and renders it; errors name the file.",
      sideEffects: false,
      example: 'local conf = template.render_file("templates/nginx.conf.j2", { port = values.port })',
    },
  },
});

type TemplateFunctions = keyof typeof templateModule.functions;

function contextOf(fn: string, value: LuaValue): TemplateContext {
  if (value === null || value === undefined) return {};
  // An empty Lua table may arrive as an empty list: it is still an empty context.
  if (Array.isArray(value) && value.length === 0) return {};
  if (typeof value === 'object' && !Array.isArray(value) && !('kind' in value && value.kind === 'lua-function')) {
    return value as TemplateContext;
  }
  throw new InvalidInputError(`template.${fn}: context must be a table with string keys`, { field: 'context' });
}

function optionsOf(fn: string, value: LuaValue): { syntax: TemplateSyntax; name?: string } {
  if (value === null || value === undefined || (Array.isArray(value) && value.length === 0)) return { syntax: 'jinja' };
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError(`template.${fn}: opts must be a table`, { field: 'opts' });
  }
  const { syntax = 'jinja', name } = value as Record<string, LuaValue>;
  if (!TEMPLATE_SYNTAXES.includes(syntax as TemplateSyntax)) {
    throw new InvalidInputError(`template.${fn}: opts.syntax must be "jinja" or "go", got ${JSON.stringify(syntax)}`, {
      field: 'opts.syntax',
    });
  }
  if (name !== undefined && name !== null && typeof name !== 'string') {
    throw new InvalidInputError(`template.${fn}: opts.name must be a string`, { field: 'opts.name' });
  }
  return { syntax: syntax as TemplateSyntax, name: name ?? undefined };
}

function stringArg(fn: string, field: string, value: LuaValue): string {
  if (typeof value !== 'string') {
    throw new InvalidInputError(
      `template.${fn}: ${field} must be a string, got ${value === null ? 'nil' : typeof value}`,
      {
        field,
      },
    );
  }
  return value;
}

export function createTemplateModule(engine: TemplateEngine): LuaModuleImplementation<TemplateFunctions> {
  return {
    render(_call, source, context, opts) {
      const options = optionsOf('render', opts);
      return engine.render(stringArg('render', 'source', source), contextOf('render', context), options);
    },
    async render_file(_call, path, context, opts) {
      const file = resolve(stringArg('render_file', 'path', path));
      const options = optionsOf('render_file', opts);
      const ctx = contextOf('render_file', context);
      let source: string;
      try {
        source = await readFile(file, 'utf8');
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT')
          throw new NotFoundError(`template.render_file: no such file "${file}"`, { cause: error });
        throw new InvalidInputError(`template.render_file: cannot read "${file}": ${(error as Error).message}`, {
          cause: error,
        });
      }
      return engine.render(source, ctx, { syntax: options.syntax, name: options.name ?? file });
    },
  };
}
