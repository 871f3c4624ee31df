import type { EventEmitter } from 'node:events';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as readline from 'node:readline';
import { messageOf, RunnerError, type Logger, type LuaSession, type Redactor } from '@runner/plugin-sdk';
import { DEFAULT_FORMAT, formatResults, quote, type FormatOptions } from './format.js';
import { HISTORY_SIZE, type HistoryFile } from './history.js';
import { replLogger, type LogLevel } from './repl-logger.js';
import { Transcript, withoutShebang, type Compile } from './transcript.js';

export const PROMPT = '> ';
export const CONTINUATION_PROMPT = '>> ';
export const EXIT_HINT = '(to exit, press Ctrl-C again or type .exit)';
/** The shell's code for "ended by SIGINT", used when Ctrl-C ends a REPL whose input is not a terminal. */
export const EXIT_INTERRUPTED = 130;

/** Where a session's output goes; the REPL gives these to every session it opens. */
export interface SessionSinks {
  stdout(text: string): void;
  stderr(text: string): void;
  logger: Logger;
}

export interface ReplOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  errors: NodeJS.WritableStream;
  /** Input and output are a terminal: prompts, line editing, history, Ctrl-C as a key. */
  terminal: boolean;
  /** Shown at start and after `.clear` on a terminal. */
  banner: string;
  /** What `.help` prints. */
  help: string;
  /** A fresh Lua session, at start and on `.clear`. */
  openSession(sinks: SessionSinks): LuaSession;
  /** Compiles without running, for `.save`. */
  compile: Compile;
  /** Line history, used on a terminal only. */
  history?: HistoryFile;
  /** What `.load` and `.save` resolve relative paths against. */
  cwd: string;
  colour: boolean;
  /** Lowest level of `log.*` and module log lines shown. */
  logLevel: LogLevel;
  /** Masks secrets in log lines shown (the kernel's one redactor). */
  redactor?: Redactor;
  /** First line of a `.save`d file (after `-- `). */
  saveHeader(): string;
  /** Where a process-level SIGINT arrives (`kill -INT`, Ctrl-C on a pipe); default `process`. */
  signals?: EventEmitter;
}

type Input =
  { kind: 'line'; text: string } | { kind: 'interrupt'; hadText: boolean } | { kind: 'eof' } | { kind: 'quit' };

/** What stopped a chunk on Ctrl-C: a RunnerError, so the runtime reports it as it is. */
class InterruptedError extends RunnerError {
  constructor() {
    super('interrupted', 'interrupted', { status: 499 });
  }
}

function isIncomplete(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error as RunnerError).code === 'invalid_input' &&
    (error as RunnerError).details?.incomplete === true
  );
}

/**
 * The read-eval-print loop, on a terminal (readline with prompts, history and keys) or on piped
 * input (no prompts, no banner; every line is read, and the exit code says whether all went well).
 * Chunks run one at a time: lines typed or piped while one runs wait their turn.
 */
export class Repl {
  readonly #options: ReplOptions;
  readonly #format: FormatOptions;
  readonly #transcript = new Transcript();
  readonly #queue: Input[] = [];
  #wake: (() => void) | undefined;
  #rl!: readline.Interface;
  #session!: LuaSession;
  #running: AbortController | undefined;
  #atPrompt = false;
  /** The last write to the screen (on a pipe: to stdout) did not end its line. */
  #openLine = false;
  #failed = false;
  #warnedExit = false;

  constructor(options: ReplOptions) {
    this.#options = options;
    this.#format = { ...DEFAULT_FORMAT, multiline: options.terminal, width: terminalWidth(options.output) };
  }

  /** Runs until `.exit`, EOF or a second Ctrl-C; resolves with the exit code. */
  async run(): Promise<number> {
    const { terminal, input, output, history } = this.#options;
    // First, so that a runtime that cannot open a session leaves nothing open behind it.
    this.#session = this.#openSession();
    let entries: string[] = [];
    if (terminal && history) {
      try {
        entries = history.load();
      } catch (error) {
        this.#error(`cannot read the history file ${history.path}: ${messageOf(error)}`);
      }
    }
    this.#rl = readline.createInterface({
      input,
      output: terminal ? output : undefined,
      terminal,
      history: entries,
      historySize: history?.size ?? HISTORY_SIZE,
      removeHistoryDuplicates: true,
      prompt: PROMPT,
    });
    this.#rl.on('line', (text: string) => {
      if (terminal && history) {
        const problem = history.append(text);
        if (problem) this.#error(problem);
      }
      this.#push({ kind: 'line', text });
    });
    this.#rl.on('close', () => this.#push({ kind: 'eof' }));
    // On a terminal, Ctrl-C is a key readline reports; elsewhere it is a signal to the process.
    this.#rl.on('SIGINT', () => this.#interrupt());
    const signals = this.#options.signals ?? process;
    const onSignal = () => this.#interrupt();
    signals.on('SIGINT', onSignal);

    if (terminal) this.#write(output, `${this.#options.banner}\n`);
    try {
      return await this.#loop();
    } finally {
      signals.off('SIGINT', onSignal);
      this.#rl.close();
      this.#session.close();
    }
  }

  async #loop(): Promise<number> {
    const { terminal } = this.#options;
    let pending: string[] = [];
    for (;;) {
      const input = await this.#next(pending.length > 0 ? CONTINUATION_PROMPT : PROMPT);
      if (input.kind === 'quit') return EXIT_INTERRUPTED;
      if (input.kind === 'eof') {
        // As lua does: input that ends inside a chunk is that chunk's syntax error.
        if (pending.length > 0) await this.#evaluate(pending.join('\n'), { final: true });
        if (terminal) this.#endLine(true);
        break;
      }
      if (input.kind === 'interrupt') {
        if (pending.length > 0 || input.hadText) {
          pending = [];
          this.#warnedExit = false;
        } else if (this.#warnedExit) {
          break;
        } else {
          this.#warnedExit = true;
          this.#write(this.#options.output, `${EXIT_HINT}\n`);
        }
        continue;
      }
      this.#warnedExit = false;
      let text = input.text;
      if (pending.length === 0) {
        const command = text.trim();
        if (command === '') continue;
        // `.5` is a number, so a command starts with a letter. Inside a chunk `.field` is Lua.
        if (/^\.[A-Za-z]/.test(command)) {
          if ((await this.#command(command)) === 'exit') break;
          continue;
        }
        // lua 5.3's REPL shorthand: `=x` is `return x`.
        if (text.startsWith('=')) text = `return ${text.slice(1)}`;
      }
      pending.push(text);
      const outcome = await this.#evaluate(pending.join('\n'), { final: false });
      if (outcome !== 'incomplete') pending = [];
    }
    return terminal || !this.#failed ? 0 : 1;
  }

  /** Runs a chunk and prints what it returned, or its error on one line. */
  async #evaluate(
    source: string,
    options: { final: boolean; record?: string },
  ): Promise<'ok' | 'failed' | 'incomplete'> {
    const controller = new AbortController();
    this.#running = controller;
    try {
      const values = await this.#session.eval(source, { signal: controller.signal });
      this.#transcript.add(options.record ?? source);
      if (values.length > 0) this.#result(formatResults(values, this.#format));
      return 'ok';
    } catch (error) {
      if (!options.final && isIncomplete(error)) return 'incomplete';
      this.#fail(messageOf(error));
      return 'failed';
    } finally {
      this.#running = undefined;
    }
  }

  async #command(line: string): Promise<'exit' | void> {
    const [, name, rest] = /^\.(\S+)\s*(.*)$/s.exec(line)!;
    const argument = unquote(rest.trim());
    switch (name) {
      case 'exit':
        return 'exit';
      case 'help':
        this.#write(this.#options.output, `${this.#options.help}\n`);
        return;
      case 'clear':
        this.#session.close();
        this.#session = this.#openSession();
        this.#transcript.clear();
        if (this.#options.terminal) {
          readline.cursorTo(this.#options.output, 0, 0);
          readline.clearScreenDown(this.#options.output);
          this.#openLine = false;
          this.#write(this.#options.output, `${this.#options.banner}\n`);
        }
        return;
      case 'load':
        if (!argument) return this.#fail('.load needs a file: .load <file>');
        return this.#load(argument);
      case 'save':
        if (!argument) return this.#fail('.save needs a file: .save <file>');
        return this.#save(argument);
      default:
        return this.#fail(`unknown command .${name} (.help lists the commands)`);
    }
  }

  async #load(file: string): Promise<void> {
    let source: string;
    try {
      source = withoutShebang(readFileSync(resolve(this.#options.cwd, file), 'utf8'));
    } catch (error) {
      return this.#fail(`.load: cannot read ${file}: ${systemMessage(error)}`);
    }
    // Compiled by `load` under the file's name, so its errors say `file:line:` as lua's do.
    // `error(e, 0)` adds no position of its own (assert would, in fengari).
    const chunk = `local f, e = load(${quote(source)}, ${quote(`@${file}`)}) if not f then error(e, 0) end return f()`;
    await this.#evaluate(chunk, { final: true, record: source });
  }

  #save(file: string): void {
    const path = resolve(this.#options.cwd, file);
    const text = this.#transcript.render(this.#options.compile, this.#options.saveHeader());
    // Through a temporary file and a rename: never half a file where an older one was.
    const temporary = `${path}.${process.pid}.tmp`;
    try {
      writeFileSync(temporary, text);
      renameSync(temporary, path);
    } catch (error) {
      rmSync(temporary, { force: true });
      return this.#fail(`.save: cannot write ${file}: ${systemMessage(error)}`);
    }
    const count = this.#transcript.size;
    this.#write(this.#options.output, `saved ${count} chunk${count === 1 ? '' : 's'} to ${file}\n`);
  }

  #openSession(): LuaSession {
    const { output, errors } = this.#options;
    return this.#options.openSession({
      stdout: (text) => this.#fromScript(output, text),
      stderr: (text) => this.#fromScript(errors, text),
      logger: replLogger((line) => this.#fromScript(errors, line), {
        level: this.#options.logLevel,
        colour: this.#options.colour,
        redactor: this.#options.redactor,
      }),
    });
  }

  /** Ctrl-C: stops the running chunk; at the prompt, discards the line or warns before exiting. */
  #interrupt(): void {
    if (this.#running) {
      this.#running.abort(new InterruptedError());
      return;
    }
    if (!this.#options.terminal) {
      // Before any lines still queued: the signal means stop now.
      this.#queue.unshift({ kind: 'quit' });
      this.#push();
      return;
    }
    const rl = this.#rl as readline.Interface & { clearLine?: () => void };
    const hadText = rl.line.length > 0;
    // readline leaves the line as it was; end it on screen (text kept) and forget it.
    if (typeof rl.clearLine === 'function') rl.clearLine();
    else this.#options.output.write('\n');
    this.#openLine = false;
    this.#push({ kind: 'interrupt', hadText });
  }

  async #next(prompt: string): Promise<Input> {
    if (this.#queue.length === 0) {
      if (this.#options.terminal) {
        this.#endLine(false);
        this.#rl.setPrompt(prompt);
        this.#rl.prompt();
      }
      this.#atPrompt = true;
      await new Promise<void>((wake) => (this.#wake = wake));
      this.#atPrompt = false;
    }
    return this.#queue.shift()!;
  }

  #push(input?: Input): void {
    if (input) this.#queue.push(input);
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** Output of a script; one arriving while the prompt waits is written above the prompt. */
  #fromScript(stream: NodeJS.WritableStream, text: string): void {
    if (!(this.#atPrompt && this.#options.terminal)) {
      this.#write(stream, text);
      return;
    }
    readline.clearLine(this.#options.output, 0);
    readline.cursorTo(this.#options.output, 0);
    stream.write(text.endsWith('\n') ? text : `${text}\n`);
    this.#rl.prompt(true);
  }

  #result(text: string): void {
    this.#endLine(false);
    this.#write(this.#options.output, `${text}\n`);
  }

  #fail(message: string): void {
    this.#failed = true;
    this.#error(message);
  }

  #error(message: string): void {
    if (this.#options.terminal) this.#endLine(false);
    this.#write(this.#options.errors, `${message}\n`);
  }

  /** Starts a new line when the last write left one open (`io.write("x")`), or always. */
  #endLine(always: boolean): void {
    if (this.#openLine || always) this.#write(this.#options.output, '\n');
  }

  #write(stream: NodeJS.WritableStream, text: string): void {
    if (text === '') return;
    stream.write(text);
    // On a terminal both streams share the screen; on pipes only stdout's lines matter.
    if (this.#options.terminal || stream === this.#options.output) this.#openLine = !text.endsWith('\n');
  }
}

function terminalWidth(output: NodeJS.WritableStream): number {
  const columns = (output as { columns?: number }).columns;
  return typeof columns === 'number' && columns > 20 ? Math.min(columns, 120) : DEFAULT_FORMAT.width;
}

/** `.load "my file.lua"`: quotes are optional around a name. */
function unquote(text: string): string {
  const quoted = /^(["'])(.*)\1$/s.exec(text);
  return quoted ? quoted[2] : text;
}

/** `no such file or directory` rather than `ENOENT: no such file or directory, open '/x'`. */
function systemMessage(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return 'no such file or directory';
  if (e.code === 'EACCES') return 'permission denied';
  if (e.code === 'EISDIR') return 'it is a directory';
  return messageOf(error);
}
