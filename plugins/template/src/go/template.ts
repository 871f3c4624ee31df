/**
 * Executes a parsed Go template against a context. Data is JSON-shaped (Lua tables, YAML vars), so
 * fields are map keys: `.vars.app` reads key `app` of key `vars` of the context. A key that is not
 * there is an error (Go's `missingkey=error`), except where `default` asks for a fallback.
 */
import { TemplateError, type TemplateContext, type TemplateVariable } from '@runner/plugin-sdk';
import { goIsBounded } from '../bounded.js';
import { isPlainObject, RANGE_ITEMS_PER_RENDERING } from '../values.js';
import { formatValue, goTypeName } from './format.js';
import { GO_FUNCTION_NAMES, goFunctions, MissingKeyError, truth } from './functions.js';
import type { Position } from './lexer.js';
import { parse, type Arg, type BlockNode, type Command, type Node, type Pipe } from './parser.js';

export interface CompiledGoTemplate {
  /** Cost bounded by the template's length and its context (bounded.ts). */
  bounded: boolean;
  render(context: TemplateContext): string;
}

class BreakSignal {}
class ContinueSignal {}
const BREAK = new BreakSignal();
const CONTINUE = new ContinueSignal();

/** Marks a value that the pipeline did not produce (no piped argument yet). */
const NO_VALUE = Symbol('no value');

function unknownVariable(path: string, pos: Position): TemplateError {
  return new TemplateError('unknown_variable', `unknown template variable "${path}"`, pos, {
    variable: path,
    syntax: 'go',
  });
}

function renderError(message: string, pos: Position, cause?: unknown): TemplateError {
  return new TemplateError('render', message, pos, { syntax: 'go', cause });
}

export function compileGo(source: string): CompiledGoTemplate {
  const tree = parse(source, GO_FUNCTION_NAMES);
  return {
    bounded: goIsBounded(tree),
    render(context) {
      const out: string[] = [];
      new Executor(context, out).walkList(tree, context);
      return out.join('');
    },
  };
}

class Executor {
  private readonly vars: { name: string; value: unknown }[];
  /** Turns the rendering's `range`s may still take (RANGE_ITEMS_PER_RENDERING, as Jinja's `range()`). */
  private rangeTurnsLeft = RANGE_ITEMS_PER_RENDERING;

  constructor(
    root: unknown,
    private readonly out: string[],
  ) {
    this.vars = [{ name: '$', value: root }];
  }

  walkList(nodes: readonly Node[], dot: unknown): void {
    for (const node of nodes) this.walk(node, dot);
  }

  private walk(node: Node, dot: unknown): void {
    switch (node.type) {
      case 'text':
        this.out.push(node.text);
        return;
      case 'action': {
        const value = this.evalPipeline(node.pipe, dot);
        if (node.pipe.decl.length === 0) this.out.push(formatValue(value));
        return;
      }
      case 'if':
      case 'with': {
        const mark = this.vars.length;
        const value = this.evalPipeline(node.pipe, dot);
        if (truth(value)) this.walkList(node.list, node.type === 'with' ? value : dot);
        else if (node.elseList) this.walkList(node.elseList, dot);
        this.vars.length = mark;
        return;
      }
      case 'range':
        return this.walkRange(node, dot);
      case 'break':
        throw BREAK;
      case 'continue':
        throw CONTINUE;
    }
  }

  private walkRange(node: BlockNode, dot: unknown): void {
    const mark = this.vars.length;
    const value = this.evalPipeline({ ...node.pipe, decl: [] }, dot);
    // Entries are produced on demand: `range 1000000` must not build a million-element array.
    let count: number;
    let entry: (i: number) => [unknown, unknown];
    if (Array.isArray(value)) {
      count = value.length;
      entry = (i) => [i, value[i]];
    } else if (isPlainObject(value)) {
      const keys = Object.keys(value).sort();
      count = keys.length;
      entry = (i) => [keys[i], value[keys[i]]];
    } else if (typeof value === 'number' && Number.isInteger(value)) {
      if (node.pipe.decl.length > 1) {
        throw renderError(`can't use two variables when ranging over an integer`, node.pos);
      }
      count = Math.max(0, value);
      entry = (i) => [i, i];
    } else if (value === null || value === undefined) {
      count = 0;
      entry = () => [undefined, undefined];
    } else {
      throw renderError(`range can't iterate over ${goTypeName(value)} ${formatValue(value)}`, node.pipe.pos);
    }

    // A rendering cannot be interrupted: what its loops may turn is bounded before they start.
    if (count > this.rangeTurnsLeft) {
      throw renderError(
        `range over ${count} entries: a template may take at most ${RANGE_ITEMS_PER_RENDERING} range turns in one rendering (nested loops included)`,
        node.pos,
      );
    }
    this.rangeTurnsLeft -= count;
    if (count === 0) {
      if (node.elseList) this.walkList(node.elseList, dot);
      this.vars.length = mark;
      return;
    }
    const [first, second] = node.pipe.decl;
    for (let i = 0; i < count; i++) {
      const [key, element] = entry(i);
      this.vars.length = mark;
      // One variable gets the element; two get the key and the element.
      if (second !== undefined) {
        this.setVar(first, key, node.pipe.assign);
        this.setVar(second, element, node.pipe.assign);
      } else if (first !== undefined) {
        this.setVar(first, element, node.pipe.assign);
      }
      try {
        this.walkList(node.list, element);
      } catch (signal) {
        if (signal === BREAK) break;
        if (signal !== CONTINUE) throw signal;
      }
    }
    this.vars.length = mark;
  }

  private setVar(name: string, value: unknown, assign: boolean): void {
    if (assign) {
      for (let i = this.vars.length - 1; i >= 0; i--) {
        if (this.vars[i].name === name) {
          this.vars[i].value = value;
          return;
        }
      }
    }
    this.vars.push({ name, value });
  }

  private lookupVar(name: string): unknown {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i].name === name) return this.vars[i].value;
    return undefined;
  }

  private evalPipeline(pipe: Pipe, dot: unknown): unknown {
    let value: unknown = NO_VALUE;
    pipe.cmds.forEach((cmd, i) => {
      const next = pipe.cmds[i + 1];
      // `.vars.x | default "a"`: the value `default` replaces may be missing.
      const lenient = next !== undefined && isDefault(next);
      value = this.evalCommand(cmd, dot, value, lenient);
    });
    for (const name of pipe.decl) this.setVar(name, value, pipe.assign);
    return value;
  }

  private evalCommand(cmd: Command, dot: unknown, piped: unknown, lenient: boolean): unknown {
    const [first, ...rest] = cmd.args;
    if (first.type !== 'function') return this.evalArg(first, dot, lenient);
    const name = first.name;
    const argNodes = rest;
    const hasPiped = piped !== NO_VALUE;

    if (name === 'and' || name === 'or') {
      const count = argNodes.length + (hasPiped ? 1 : 0);
      if (count < 1) throw renderError(`wrong number of args for ${name}: want at least 1 got 0`, first.pos);
      let value: unknown;
      for (let i = 0; i < count; i++) {
        value = i < argNodes.length ? this.evalArg(argNodes[i], dot, false) : piped;
        if (truth(value) === (name === 'or')) return value;
      }
      return value;
    }

    const argsLenient = name === 'default';
    const args = argNodes.map((arg) => this.evalArg(arg, dot, argsLenient));
    const labels = argNodes.map(labelOf);
    if (hasPiped) {
      args.push(piped);
      labels.push(undefined);
    }
    try {
      return goFunctions[name](args, { labels });
    } catch (error) {
      if (error instanceof MissingKeyError) throw unknownVariable(error.path, cmd.pos);
      if (error instanceof TemplateError) throw error;
      throw renderError(`${name}: ${(error as Error).message.replace(new RegExp(`^${name}: `), '')}`, first.pos, error);
    }
  }

  private evalArg(arg: Arg, dot: unknown, lenient: boolean): unknown {
    switch (arg.type) {
      case 'field':
        return this.evalChain(dot, arg.chain, '', arg.pos, lenient);
      case 'dot':
        return dot;
      case 'variable': {
        const base = arg.name === '$' ? '' : arg.name;
        return this.evalChain(this.lookupVar(arg.name), arg.chain, base, arg.pos, lenient);
      }
      case 'pipe':
        return this.evalChain(this.evalPipeline(arg.pipe, dot), arg.chain, '(...)', arg.pos, lenient);
      case 'function':
        // A function name as an argument is a call without arguments: `{{ printf "%v" (list) }}`.
        return this.evalCommand({ args: [arg], pos: arg.pos }, dot, NO_VALUE, false);
      case 'string':
      case 'number':
      case 'bool':
        return arg.value;
      case 'nil':
        return null;
    }
  }

  /** Reads `chain` from `receiver`; `base` is how the receiver is named in errors. */
  private evalChain(
    receiver: unknown,
    chain: readonly string[],
    base: string,
    pos: Position,
    lenient: boolean,
  ): unknown {
    let value = receiver;
    let path = base;
    for (const key of chain) {
      path = path === '' ? key : `${path}.${key}`;
      if (isPlainObject(value)) {
        if (Object.hasOwn(value, key) && value[key] !== undefined) {
          value = value[key];
          continue;
        }
      } else if (value !== null && value !== undefined) {
        throw renderError(`can't evaluate field ${key} in type ${goTypeName(value)} (at "${path}")`, pos);
      }
      if (lenient) return undefined;
      throw unknownVariable(path, pos);
    }
    return value;
  }
}

function isDefault(cmd: Command): boolean {
  const first = cmd.args[0];
  return first.type === 'function' && first.name === 'default';
}

/** The path an argument reads, for naming a missing key that `index` looks up in it. */
function labelOf(arg: Arg): string | undefined {
  if (arg.type === 'field') return arg.chain.join('.');
  if (arg.type === 'variable') return [arg.name === '$' ? '' : arg.name, ...arg.chain].filter(Boolean).join('.') || '$';
  if (arg.type === 'dot') return '.';
  return undefined;
}

/**
 * The context variables a Go template reads: field chains while the dot is the context (outside
 * `range` and `with` bodies), `$.x` chains anywhere, and `index .x "k"` with constant keys.
 */
export function goVariables(source: string): TemplateVariable[] {
  const tree = parse(source, GO_FUNCTION_NAMES);
  const found: TemplateVariable[] = [];
  const record = (segments: (string | number)[], pos: Position, optional: boolean) => {
    if (segments.length === 0) return;
    found.push({ path: segments.join('.'), segments, line: pos.line, column: pos.column, optional });
  };

  const rootChain = (arg: Arg, dotIsRoot: boolean): string[] | undefined => {
    if (arg.type === 'field' && dotIsRoot) return arg.chain;
    if (arg.type === 'variable' && arg.name === '$') return arg.chain;
    return undefined;
  };

  const walkArg = (arg: Arg, dotIsRoot: boolean, optional: boolean) => {
    const chain = rootChain(arg, dotIsRoot);
    if (chain) record(chain, arg.pos, optional);
    else if (arg.type === 'pipe') walkPipe(arg.pipe, dotIsRoot);
  };

  const walkPipe = (pipe: Pipe, dotIsRoot: boolean) => {
    pipe.cmds.forEach((cmd, i) => {
      const [first, ...rest] = cmd.args;
      const next = pipe.cmds[i + 1];
      if (first.type !== 'function') return walkArg(first, dotIsRoot, next !== undefined && isDefault(next));
      const optional = first.name === 'default';
      if (first.name === 'index' && rest.length > 0) {
        const chain = rootChain(rest[0], dotIsRoot);
        const keys = rest.slice(1);
        if (chain && keys.every((k) => k.type === 'string' || k.type === 'number')) {
          record([...chain, ...keys.map((k) => (k as { value: string | number }).value)], rest[0].pos, optional);
          return;
        }
      }
      for (const arg of rest) walkArg(arg, dotIsRoot, optional);
    });
  };

  const walkList = (nodes: readonly Node[], dotIsRoot: boolean) => {
    for (const node of nodes) {
      switch (node.type) {
        case 'action':
          walkPipe(node.pipe, dotIsRoot);
          break;
        case 'if':
          walkPipe(node.pipe, dotIsRoot);
          walkList(node.list, dotIsRoot);
          if (node.elseList) walkList(node.elseList, dotIsRoot);
          break;
        case 'with':
        case 'range':
          walkPipe(node.pipe, dotIsRoot);
          walkList(node.list, false);
          if (node.elseList) walkList(node.elseList, dotIsRoot);
          break;
        default:
      }
    }
  };

  walkList(tree, true);
  return found.sort((a, b) => a.line - b.line || a.column - b.column);
}
