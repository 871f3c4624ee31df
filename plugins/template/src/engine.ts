/**
 * The TemplateEngine service: both syntaxes behind one cache of compiled templates. Loaded with
 * `import()` from the plugin's setup, because nunjucks costs tens of milliseconds to load and
 * `runner --help` imports every plugin's entry module.
 */
import {
  hasTemplateMarkup,
  isTemplateTruthy,
  TemplateError,
  TEMPLATE_SYNTAXES,
  type TemplateContext,
  type TemplateEngine,
  type TemplateSyntax,
} from '@runner/plugin-sdk';
import { compileGo, goVariables } from './go/template.js';
import { createJinjaEngine, type JinjaEngine } from './jinja.js';

interface Compiled {
  render(context: TemplateContext): string;
}

export interface TemplateEngineOptions {
  /** Compiled templates kept, least recently used dropped first (default 1000). */
  cacheSize?: number;
}

/** Words a bare `when:` may be that are answers, not expressions (`when: "yes"`). */
const LITERAL_CONDITIONS = new Set(['', 'true', 'false', 'yes', 'no', 'on', 'off', '1', '0', 'none', 'nil', 'null']);

function assertSyntax(syntax: unknown): asserts syntax is TemplateSyntax {
  if (!TEMPLATE_SYNTAXES.includes(syntax as TemplateSyntax)) {
    throw new TypeError(`unknown template syntax "${String(syntax)}" (expected ${TEMPLATE_SYNTAXES.join(' or ')})`);
  }
}

function asTemplateError(error: unknown, syntax: TemplateSyntax, name: string | undefined): TemplateError {
  if (error instanceof TemplateError) return error.withName(name, syntax);
  // Anything else is a fault of ours or of a library under us: still say where it happened.
  const message = error instanceof Error ? error.message : String(error);
  return new TemplateError('render', message, { line: 1, column: 1 }, { name, syntax, cause: error });
}

export function createTemplateEngine(options: TemplateEngineOptions = {}): TemplateEngine & {
  /** Cached compiled templates, for tests and `runner doctor`. */
  cacheSize(): number;
} {
  const limit = Math.max(1, options.cacheSize ?? 1000);
  // Made on the first Jinja template: it loads nunjucks (see jinja.ts).
  let jinjaEngine: JinjaEngine | undefined;
  const jinja = () => (jinjaEngine ??= createJinjaEngine());
  const cache = new Map<string, Compiled>();

  function compiled(source: string, syntax: TemplateSyntax): Compiled {
    const key = `${syntax}\0${source}`;
    let entry = cache.get(key);
    if (entry) {
      // Re-insert so that Map order is least recently used first.
      cache.delete(key);
      cache.set(key, entry);
      return entry;
    }
    entry = syntax === 'jinja' ? jinja().compile(source) : compileGo(source);
    cache.set(key, entry);
    if (cache.size > limit) cache.delete(cache.keys().next().value!);
    return entry;
  }

  function render(source: string, context: TemplateContext, syntax: TemplateSyntax, name?: string): string {
    assertSyntax(syntax);
    if (typeof source !== 'string') throw new TypeError('template source must be a string');
    // Text without markup renders to itself; skipping the cache keeps it out of the LRU too.
    if (!hasTemplateMarkup(source, syntax)) return source;
    try {
      return compiled(source, syntax).render(context ?? {});
    } catch (error) {
      throw asTemplateError(error, syntax, name);
    }
  }

  return {
    render(source, context, options) {
      return render(source, context, options?.syntax, options?.name);
    },

    evaluate(expression, context, syntax) {
      assertSyntax(syntax);
      const trimmed = expression.trim();
      if (hasTemplateMarkup(expression, syntax)) return isTemplateTruthy(render(expression, context, syntax));
      if (LITERAL_CONDITIONS.has(trimmed.toLowerCase())) return isTemplateTruthy(trimmed);
      // A bare expression, as Ansible's `when:` takes it. Its errors point into the expression.
      try {
        return isTemplateTruthy(render(`{{ ${trimmed} }}`, context, syntax));
      } catch (error) {
        if (!(error instanceof TemplateError) || error.line !== 1) throw error;
        const lead = expression.length - expression.trimStart().length;
        const column = Math.max(1, error.column - 3 + lead);
        throw new TemplateError(
          error.kind,
          error.reason,
          { line: 1, column },
          {
            variable: error.variable,
            syntax,
            cause: error.cause,
          },
        );
      }
    },

    variables(source, syntax) {
      assertSyntax(syntax);
      if (!hasTemplateMarkup(source, syntax)) return [];
      try {
        return syntax === 'jinja' ? jinja().variables(source) : goVariables(source);
      } catch (error) {
        throw asTemplateError(error, syntax, undefined);
      }
    },

    check(source, syntax, name) {
      assertSyntax(syntax);
      if (!hasTemplateMarkup(source, syntax)) return;
      try {
        compiled(source, syntax);
      } catch (error) {
        throw asTemplateError(error, syntax, name);
      }
    },

    cacheSize: () => cache.size,
  };
}
