/**
 * The undocumented parts of nunjucks this plugin builds on (parser, compiler, AST nodes), typed as
 * far as it uses them. @types/nunjucks declares only the public Environment API. Checked against
 * nunjucks 3.2.4; the tests exercise every member used here.
 */
import type nunjucks from 'nunjucks';

/** An AST node. `lineno` and `colno` are 0-based. */
export interface NjNode {
  typename: string;
  lineno: number;
  colno: number;
  /** Names of the properties holding child nodes, in source order. */
  fields: string[];
  [field: string]: any;
}

/** The compiler's scope: maps template names bound at compile time to JS variables. */
export interface NjFrame {
  lookup(name: string): string | undefined;
}

export interface NjCompiler {
  codebuf: string[];
  buffer: string;
  compile(node: NjNode, frame?: NjFrame): void;
  getCode(): string;
  fail(message: string, lineno?: number, colno?: number): never;
  compileSymbol(node: NjNode, frame: NjFrame): void;
  compileLookupVal(node: NjNode, frame: NjFrame): void;
  compileFilter(node: NjNode, frame: NjFrame): void;
  compileIs(node: NjNode, frame: NjFrame): void;
  compileOutput(node: NjNode, frame: NjFrame): void;
  compileLiteral(node: NjNode, frame: NjFrame): void;
  _compileAggregate(node: NjNode, frame: NjFrame, start?: string, end?: string): void;
  _emit(code: string): void;
  _emitLine(code: string): void;
}

export type NjCompilerClass = new (templateName: string, throwOnUndefined: boolean) => NjCompiler;

/** The runtime scope at render time (`{% set %}`, loop variables). */
export interface NjRuntimeFrame {
  lookup(name: string): unknown;
}

/** The render context: the caller's variables plus top-level `{% set %}`. */
export interface NjContext {
  ctx: Record<string, unknown>;
  env: { globals: Record<string, unknown> };
}

/** A nunjucks error: lineno/colno are 1-based from the parser and compiler. */
export interface NjTemplateError extends Error {
  lineno?: number;
  colno?: number;
  cause?: unknown;
}

/** The members of the nunjucks module object that @types/nunjucks leaves out. */
export interface NunjucksModule {
  Environment: typeof nunjucks.Environment;
  Template: new (
    source: { type: 'code'; obj: unknown },
    env: nunjucks.Environment,
    path: string,
    eagerCompile: boolean,
  ) => { render(context: object): string };
  parser: { parse(source: string, extensions: unknown[], options: object): NjNode };
  compiler: { Compiler: NjCompilerClass };
  nodes: Record<string, new (...args: any[]) => NjNode>;
}

/** Environment members read by the compiler overrides. */
export interface NjEnvironmentInternals {
  filters: Record<string, unknown>;
  tests: Record<string, unknown>;
  globals: Record<string, unknown>;
  extensionsList: unknown[];
  opts: object;
}
