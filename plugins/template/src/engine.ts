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
  type BoundedRenderOptions,
  type TemplateContext,
  type TemplateEngine,
  type TemplateSyntax,
} from '@runner/plugin-sdk';
import { compileGo, goVariables } from './go/template.js';
import { createJinjaEngine, type JinjaEngine } from './jinja.js';
import type { PoolRenderOptions, RenderJob } from './render-pool.js';

interface Compiled {
  bounded: boolean;
  render(context: TemplateContext): string;
}

export interface TemplateEngineOptions {
  /** Compiled templates kept, least recently used dropped first (default 1000). */
  cacheSize?: number;
  /** Heap of a rendering on a worker thread when the caller gives none (default 512 MiB). */
  memoryLimitBytes?: number;
  /**
   * Where templates that are not bounded render (render-pool.ts's RenderPool, passed in so that
   * the worker's own engine does not load it); absent, they render on this thread.
   */
  workers?: {
    render(job: Omit<RenderJob, 'id'>, options: PoolRenderOptions): Promise<string>;
    close(): Promise<void>;
  };
}

const DEFAULT_MEMORY_LIMIT = 512 * 1024 * 1024;

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
  /** Ends the idle template workers (`workers.close`). */
  close(): Promise<void>;
} {
  const limit = Math.max(1, options.cacheSize ?? 1000);
  // Made on the first Jinja template: it loads nunjucks (see jinja.ts).
  let jinjaEngine: JinjaEngine | undefined;
  const jinja = () => (jinjaEngine ??= createJinjaEngine());
  const cache = new Map<string, Compiled>();
  const pool = options.workers;
  const defaultLimit = options.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT;

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

  function isBounded(source: string, syntax: TemplateSyntax, name?: string): boolean {
    assertSyntax(syntax);
    if (!hasTemplateMarkup(source, syntax)) return true;
    try {
      return compiled(source, syntax).bounded;
    } catch (error) {
      throw asTemplateError(error, syntax, name);
    }
  }

  async function renderBounded(source: string, context: TemplateContext, options: BoundedRenderOptions) {
    if (!pool || isBounded(source, options.syntax, options.name))
      return render(source, context, options.syntax, options.name);
    return pool.render(
      { source, context: context ?? {}, syntax: options.syntax, name: options.name },
      {
        name: options.name,
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        memoryLimitBytes: options.memoryLimitBytes ?? defaultLimit,
      },
    );
  }

  return {
    render(source, context, options) {
      return render(source, context, options?.syntax, options?.name);
    },

    evaluate(expression, context, syntax) {
      const source = conditionSource(expression, syntax);
      if (typeof source === 'boolean') return source;
      try {
        return isTemplateTruthy(render(source, context, syntax));
      } catch (error) {
        throw inExpression(error, expression, source, syntax);
      }
    },

    isBounded: (source, syntax) => isBounded(source, syntax),
    renderBounded,
    async evaluateBounded(expression, context, options) {
      const source = conditionSource(expression, options.syntax);
      if (typeof source === 'boolean') return source;
      try {
        return isTemplateTruthy(await renderBounded(source, context, options));
      } catch (error) {
        throw inExpression(error, expression, source, options.syntax);
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
    close: async () => pool?.close(),
  };
}

/**
 * A condition as a template: with markup as written, a bare expression (as Ansible's `when:` takes
 * it) inside `{{ }}`; a literal answer (`yes`, `false`) is its truth.
 */
function conditionSource(expression: string, syntax: TemplateSyntax): string | boolean {
  assertSyntax(syntax);
  const trimmed = expression.trim();
  if (hasTemplateMarkup(expression, syntax)) return expression;
  if (LITERAL_CONDITIONS.has(trimmed.toLowerCase())) return isTemplateTruthy(trimmed);
  return `{{ ${trimmed} }}`;
}

/** An error of a bare condition `x == 1` rendered as `{{ x == 1 }}`: its column is the expression's. */
function inExpression(error: unknown, expression: string, source: string, syntax: TemplateSyntax): unknown {
  if (source === expression || !(error instanceof TemplateError) || error.line !== 1) return error;
  const lead = expression.length - expression.trimStart().length;
  const column = Math.max(1, error.column - 3 + lead);
  return new TemplateError(
    error.kind,
    error.reason,
    { line: 1, column },
    { variable: error.variable, syntax, cause: error.cause },
  );
}
