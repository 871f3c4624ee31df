/**
 * Parses Go text/template into a tree, checking at parse time what Go checks there: functions
 * exist, `$variables` are declared, `break`/`continue` sit inside `range`, every block is closed.
 */
import { TemplateError } from '@runner/plugin-sdk';
import { lex, type Position, type Token } from './lexer.js';

export type Arg =
  | { type: 'field'; chain: string[]; pos: Position }
  | { type: 'dot'; pos: Position }
  | { type: 'variable'; name: string; chain: string[]; pos: Position }
  | { type: 'function'; name: string; pos: Position }
  | { type: 'pipe'; pipe: Pipe; chain: string[]; pos: Position }
  | { type: 'string'; value: string; pos: Position }
  | { type: 'number'; value: number; pos: Position }
  | { type: 'bool'; value: boolean; pos: Position }
  | { type: 'nil'; pos: Position };

export interface Command {
  args: Arg[];
  pos: Position;
}

export interface Pipe {
  /** Declared (`:=`) or assigned (`=`) variables, with `$`. */
  decl: string[];
  assign: boolean;
  cmds: Command[];
  pos: Position;
}

/** `if`, `with` or `range`; `elseList` also holds the nested block of `{{ else if }}`. */
export interface BlockNode {
  type: 'if' | 'with' | 'range';
  pipe: Pipe;
  list: Node[];
  elseList: Node[] | undefined;
  pos: Position;
}

export type Node =
  | { type: 'text'; text: string }
  | { type: 'action'; pipe: Pipe; pos: Position }
  | BlockNode
  | { type: 'break' | 'continue'; pos: Position };

export function parse(source: string, functions: ReadonlySet<string>): Node[] {
  return new Parser(lex(source), functions).parseTemplate();
}

interface ListEnd {
  nodes: Node[];
  /** What ended the list: `{{ end }}`, `{{ else }}` (its keyword token) or the end of input. */
  stop: 'end' | 'else' | 'eof';
  token: Token;
}

class Parser {
  private i = 0;
  private readonly vars: string[] = ['$'];
  private rangeDepth = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly functions: ReadonlySet<string>,
  ) {}

  private fail(message: string, pos: Position): never {
    throw new TemplateError('syntax', message, pos, { syntax: 'go' });
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)];
  }

  private next(): Token {
    return this.tokens[Math.min(this.i++, this.tokens.length - 1)];
  }

  private expectRight(context: string): void {
    const token = this.next();
    if (token.type !== 'right') this.fail(`unexpected ${describe(token)} in ${context}`, token.pos);
  }

  parseTemplate(): Node[] {
    const { nodes, stop, token } = this.parseList();
    if (stop !== 'eof') this.fail(`unexpected {{ ${stop} }}`, token.pos);
    return nodes;
  }

  private parseList(): ListEnd {
    const nodes: Node[] = [];
    for (;;) {
      const token = this.next();
      if (token.type === 'eof') return { nodes, stop: 'eof', token };
      if (token.type === 'text') {
        nodes.push({ type: 'text', text: token.value });
        continue;
      }
      // token is `{{`
      const word = this.peek();
      if (word.type === 'keyword') {
        switch (word.value) {
          case 'end':
            this.next();
            this.expectRight('end');
            return { nodes, stop: 'end', token: word };
          case 'else':
            this.next();
            return { nodes, stop: 'else', token: word };
          case 'if':
          case 'with':
          case 'range':
            this.next();
            nodes.push(this.parseControl(word.value, word));
            continue;
          case 'break':
          case 'continue':
            this.next();
            if (this.rangeDepth === 0) this.fail(`{{ ${word.value} }} outside {{ range }}`, word.pos);
            this.expectRight(word.value);
            nodes.push({ type: word.value, pos: word.pos });
            continue;
          default:
            this.fail(
              `{{ ${word.value} }} is not supported: a template must be self-contained (no define, template or block)`,
              word.pos,
            );
        }
      }
      const pipe = this.parsePipeline('command', false);
      this.expectRight('command');
      nodes.push({ type: 'action', pipe, pos: pipe.pos });
    }
  }

  /** Parses `if`/`with`/`range` after its keyword, through its `{{ end }}`. */
  private parseControl(kind: 'if' | 'with' | 'range', opener: Token): Node {
    const mark = this.vars.length;
    const pipe = this.parsePipeline(kind, kind === 'range');
    this.expectRight(kind);
    if (kind === 'range') this.rangeDepth++;
    const body = this.parseList();
    if (kind === 'range') this.rangeDepth--;
    if (body.stop === 'eof') this.fail(`unclosed {{ ${kind} }}: no matching {{ end }}`, opener.pos);
    let elseList: Node[] | undefined;
    if (body.stop === 'else') {
      const chained = this.peek();
      // `{{ else if x }}` / `{{ else with x }}` open a nested block that shares this one's `{{ end }}`.
      if (chained.type === 'keyword' && (chained.value === 'if' || chained.value === 'with') && kind !== 'range') {
        this.next();
        elseList = [this.parseControl(chained.value, chained)];
      } else {
        this.expectRight('else');
        const rest = this.parseList();
        if (rest.stop === 'eof') this.fail(`unclosed {{ ${kind} }}: no matching {{ end }}`, opener.pos);
        if (rest.stop === 'else') this.fail(`{{ else }} after {{ else }} in {{ ${kind} }}`, rest.token.pos);
        elseList = rest.nodes;
      }
    }
    this.vars.length = mark;
    return { type: kind, pipe, list: body.nodes, elseList, pos: opener.pos };
  }

  private parsePipeline(context: string, allowTwoVars: boolean): Pipe {
    const start = this.peek();
    const decl: string[] = [];
    let assign = false;
    // `$x :=`, `$x =`, and in range `$i, $e :=`.
    if (start.type === 'variable') {
      const after = this.peek(1);
      if (after.type === 'declare' || after.type === 'assign') {
        decl.push(start.value);
        assign = after.type === 'assign';
        this.i += 2;
      } else if (after.type === 'comma' && allowTwoVars) {
        const second = this.peek(2);
        const op = this.peek(3);
        if (second.type !== 'variable' || (op.type !== 'declare' && op.type !== 'assign')) {
          this.fail('expected "$index, $element :=" in range', after.pos);
        }
        decl.push(start.value, second.value);
        assign = op.type === 'assign';
        this.i += 4;
      }
      for (const name of decl) {
        if (name === '$') this.fail('cannot assign to $', start.pos);
        if (assign && !this.vars.includes(name)) this.fail(`undefined variable "${name}"`, start.pos);
      }
    }
    const cmds: Command[] = [];
    for (;;) {
      const token = this.peek();
      if (token.type === 'right' || token.type === 'rparen' || token.type === 'eof') {
        if (cmds.length === 0 || token.type === 'eof') this.fail(`missing value for ${context}`, token.pos);
        break;
      }
      if (cmds.length > 0) {
        if (token.type !== 'pipe') this.fail(`unexpected ${describe(token)} in ${context}`, token.pos);
        this.next();
      }
      const cmd = this.parseCommand(context);
      if (cmds.length > 0 && cmd.args[0].type !== 'function') {
        this.fail(`cannot pipe into ${argText(cmd.args[0])}: only a function takes the piped value`, cmd.pos);
      }
      cmds.push(cmd);
    }
    // Declared after the pipeline, so `{{ $x := $x }}` reads the outer one, as in Go.
    if (!assign) this.vars.push(...decl);
    return { decl, assign, cmds, pos: start.pos };
  }

  private parseCommand(context: string): Command {
    const args: Arg[] = [];
    const pos = this.peek().pos;
    for (;;) {
      const token = this.peek();
      if (token.type === 'right' || token.type === 'rparen' || token.type === 'pipe' || token.type === 'eof') break;
      if (args.length > 0 && !token.spaced) {
        this.fail(`missing space before ${describe(token)}`, token.pos);
      }
      args.push(this.parseOperand(context));
    }
    if (args.length === 0) this.fail(`missing value for ${context}`, pos);
    const first = args[0];
    if (first.type === 'nil' && args.length === 1) this.fail('nil is not a command', first.pos);
    if (first.type !== 'function' && args.length > 1) {
      this.fail(`cannot give arguments to ${argText(first)}: it is not a function`, args[1].pos);
    }
    return { args, pos };
  }

  private parseOperand(context: string): Arg {
    const token = this.next();
    switch (token.type) {
      case 'field':
        return { type: 'field', chain: [token.value, ...this.parseChain()], pos: token.pos };
      case 'dot':
        return { type: 'dot', pos: token.pos };
      case 'variable':
        if (!this.vars.includes(token.value)) this.fail(`undefined variable "${token.value}"`, token.pos);
        return { type: 'variable', name: token.value, chain: this.parseChain(), pos: token.pos };
      case 'identifier':
        if (!this.functions.has(token.value)) {
          this.fail(
            `function "${token.value}" not defined (a context variable is a field: ".${token.value}")`,
            token.pos,
          );
        }
        return { type: 'function', name: token.value, pos: token.pos };
      case 'string':
        return { type: 'string', value: token.value, pos: token.pos };
      case 'number':
        return { type: 'number', value: token.number!, pos: token.pos };
      case 'bool':
        return { type: 'bool', value: token.value === 'true', pos: token.pos };
      case 'nil':
        return { type: 'nil', pos: token.pos };
      case 'lparen': {
        const pipe = this.parsePipeline('parenthesized pipeline', false);
        const close = this.next();
        if (close.type !== 'rparen') this.fail(`unclosed left paren`, token.pos);
        return { type: 'pipe', pipe, chain: this.parseChain(), pos: token.pos };
      }
      default:
        return this.fail(`unexpected ${describe(token)} in ${context}`, token.pos);
    }
  }

  /** Fields written right after an operand: `$x.a.b`, `(index .m 0).name`. */
  private parseChain(): string[] {
    const chain: string[] = [];
    while (this.peek().type === 'field' && !this.peek().spaced) chain.push(this.next().value);
    return chain;
  }
}

function describe(token: Token): string {
  switch (token.type) {
    case 'eof':
      return 'end of template';
    case 'right':
      return '"}}"';
    case 'string':
      return `string ${JSON.stringify(token.value)}`;
    case 'field':
      return `field ".${token.value}"`;
    default:
      return `"${token.value}"`;
  }
}

export function argText(arg: Arg): string {
  switch (arg.type) {
    case 'field':
      return `.${arg.chain.join('.')}`;
    case 'dot':
      return '.';
    case 'variable':
      return [arg.name, ...arg.chain].join('.');
    case 'function':
      return arg.name;
    case 'pipe':
      return ['(...)', ...arg.chain].join('.');
    case 'string':
      return JSON.stringify(arg.value);
    case 'number':
    case 'bool':
      return String(arg.value);
    case 'nil':
      return 'nil';
  }
}
