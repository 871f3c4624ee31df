import { RunnerError } from './errors.js';
import { createServiceRef } from './service-ref.js';

/** The two template languages a workflow may choose with `template:` (workflow-language.md). */
export type TemplateSyntax = 'jinja' | 'go';

export const TEMPLATE_SYNTAXES: readonly TemplateSyntax[] = Object.freeze(['jinja', 'go']);

/** What a template may read: `vars`, `values`, `item`, `tasks`, ... */
export type TemplateContext = Readonly<Record<string, unknown>>;

export interface RenderOptions {
  syntax: TemplateSyntax;
  /** Where the template comes from (`deploy.yaml tasks[1].exec.script`); added to error messages. */
  name?: string;
}

/** How a rendering that may take long is bounded (TemplateEngine.renderBounded). */
export interface BoundedRenderOptions extends RenderOptions {
  /** The rendering fails with a timeout error after this; undefined: no time limit. */
  timeoutMs?: number;
  /** Ends the rendering (its thread is stopped) with the signal's reason. */
  signal?: AbortSignal;
  /** Heap the rendering may use; past it, it fails saying so. */
  memoryLimitBytes?: number;
}

/** A variable a template reads from its context, found without rendering it. */
export interface TemplateVariable {
  /**
   * The longest statically known path: `vars.app`, `tasks.build.outputs.artifact`, `vars.hosts[0]`.
   * A dynamic part (`vars[name]`) ends the path before it.
   */
  path: string;
  /** The same path split up; `segments[0]` is the context key (`vars`). */
  segments: readonly (string | number)[];
  /** 1-based position of the path's first character in the template. */
  line: number;
  column: number;
  /**
   * True when the template tolerates its absence (`vars.x | default('a')`, `vars.x is defined`,
   * Go `default`), so a validator must not report it as unknown.
   */
  optional: boolean;
}

/**
 * Renders templates in the two workflow syntaxes. All methods are synchronous: the implementation
 * is loaded while the kernel boots. Compiled templates are cached by source, so rendering the same
 * text again costs only its execution.
 *
 * Rules every syntax follows:
 * - A variable or key that is not in the context is an error naming it with its position
 *   (`unknown template variable "vars.ap" at line 2, column 14`), never an empty string; the
 *   explicit fallbacks (`default`, `is defined`) are the only way to tolerate absence.
 * - No HTML autoescaping: the output is shell commands and Lua.
 * - Positions are 1-based lines and columns of the template text.
 */
export interface TemplateEngine {
  /** Renders `source`. Throws TemplateError (syntax, unknown variable, or a failing function). */
  render(source: string, context: TemplateContext, options: RenderOptions): string;
  /**
   * Evaluates a condition such as `when: "{{ vars.app == 'web' }}"`: renders it and applies
   * {@link isTemplateTruthy}. Text without template markup (`vars.app == 'web'`, as Ansible's
   * `when:` takes it) is evaluated as one expression.
   */
  evaluate(expression: string, context: TemplateContext, syntax: TemplateSyntax): boolean;
  /**
   * The context variables `source` reads, in source order, one entry per occurrence. Names the
   * template binds itself (loop variables, `set`, macro arguments, Go `$vars`, fields of a Go
   * `range`/`with` element) are left out. Throws TemplateError on a syntax error.
   */
  variables(source: string, syntax: TemplateSyntax): TemplateVariable[];
  /** Throws TemplateError with the position of the first syntax error; returns when it compiles. */
  check(source: string, syntax: TemplateSyntax, name?: string): void;
  /**
   * True when rendering `source` costs time and memory bounded by its length and its context's
   * size: no loops, `set`, macros, function calls, or filters outside a short list of linear
   * ones. Such a template renders on the caller's thread in `renderBounded`. Throws
   * TemplateError on a syntax error.
   */
  isBounded(source: string, syntax: TemplateSyntax): boolean;
  /**
   * Renders as `render` does, bounded like a script: a template that is not `isBounded` renders
   * on a worker thread, stopped at `timeoutMs` or `signal` and at `memoryLimitBytes`, so a loop
   * or filter bomb never stalls the caller's thread. Errors are TemplateErrors, or a RunnerError
   * `timeout` naming the template and the limit.
   */
  renderBounded(source: string, context: TemplateContext, options: BoundedRenderOptions): Promise<string>;
  /** `evaluate`, bounded as `renderBounded` is. */
  evaluateBounded(expression: string, context: TemplateContext, options: BoundedRenderOptions): Promise<boolean>;
}

export const TemplateEngineRef = createServiceRef<TemplateEngine>({
  id: 'template.engine',
  description: 'renders Jinja (nunjucks) and Go text/template templates',
});

export type TemplateErrorKind = 'syntax' | 'unknown_variable' | 'render';

const CODES: Record<TemplateErrorKind, string> = {
  syntax: 'template_syntax_error',
  unknown_variable: 'unknown_template_variable',
  render: 'template_render_error',
};

/**
 * A template that does not compile or render. The message reads
 * `<reason> at line L, column C[ in <name>]`; `reason`, `line` and `column` are kept apart so that a
 * caller can restate the position in its own file (a YAML field's template starts mid-file).
 */
export class TemplateError extends RunnerError {
  readonly kind: TemplateErrorKind;
  /** The message without position or name: `unknown template variable "vars.ap"`. */
  readonly reason: string;
  readonly line: number;
  readonly column: number;
  readonly templateName?: string;
  /** The unknown variable's path, for kind `unknown_variable`. */
  readonly variable?: string;

  constructor(
    kind: TemplateErrorKind,
    reason: string,
    position: { line: number; column: number },
    options: { name?: string; variable?: string; syntax?: TemplateSyntax; cause?: unknown } = {},
  ) {
    super(
      CODES[kind],
      `${reason} at line ${position.line}, column ${position.column}${options.name ? ` in ${options.name}` : ''}`,
      {
        status: 400,
        cause: options.cause,
        details: {
          template: options.name,
          line: position.line,
          column: position.column,
          variable: options.variable,
          syntax: options.syntax,
        },
      },
    );
    this.kind = kind;
    this.reason = reason;
    this.line = position.line;
    this.column = position.column;
    this.templateName = options.name;
    this.variable = options.variable;
  }

  /** The same error attributed to a named template (the cache holds templates without names). */
  withName(name: string | undefined, syntax?: TemplateSyntax): TemplateError {
    if (name === undefined || name === this.templateName) return this;
    return new TemplateError(this.kind, this.reason, this, {
      name,
      variable: this.variable,
      syntax,
      cause: this.cause,
    });
  }
}

const FALSY_OUTPUTS = new Set(['', 'false', '0', 'none', 'nil', 'null', 'no', 'off']);

/**
 * The truthiness of a rendered condition: after trimming whitespace, `false`, `0`, `none`, `nil`,
 * `null`, `no`, `off` (in any letter case) and the empty string are false; anything else is true.
 * So `true`/`True`, `1`, `yes` and any other non-empty text are true.
 */
export function isTemplateTruthy(rendered: string): boolean {
  return !FALSY_OUTPUTS.has(rendered.trim().toLowerCase());
}

/**
 * True when `text` holds template markup of `syntax` (`{{`, and for jinja also `{%` and `{#`).
 * Text without it renders to itself, so callers may skip rendering it.
 */
export function hasTemplateMarkup(text: string, syntax: TemplateSyntax): boolean {
  if (text.includes('{{')) return true;
  return syntax === 'jinja' && (text.includes('{%') || text.includes('{#'));
}
