import { join } from 'node:path';
import { besideLocalMaster, LuaModulesRef, LuaRuntimeRef, type CommandContext } from '@runner/plugin-sdk';
import { HistoryFile } from './history.js';
import { Repl } from './repl.js';

export const HISTORY_FILE = 'repl_history';

/** The banner's and `.help`'s facts. */
export function bannerText(version: string, modules: readonly string[], dryRun: boolean): string {
  // A count, not the names: forty names wrapped the banner over three lines; .help lists them.
  const count = modules.length === 1 ? '1 module' : `${modules.length} modules`;
  return `runner ${version} Lua 5.3 REPL${dryRun ? ' (dry run)' : ''} — ${count} — .help for help and their names`;
}

export function helpText(modules: readonly string[]): string {
  return [
    '.help          show this help',
    '.exit          leave the REPL (also Ctrl-D)',
    '.clear         start a fresh Lua session: globals are forgotten (the screen is cleared)',
    '.load <file>   run a Lua file in this session and print what it returns',
    '.save <file>   write the chunks that ran without error since the session began to a file that .load replays',
    '',
    `Modules are globals: ${modules.join(', ')}.`,
    "A module's functions and documentation: runner modules info <name>",
    'An unfinished chunk continues on the next line (>>). Ctrl-C stops a running chunk or',
    'discards an unfinished one; twice on an empty line, it exits.',
  ].join('\n');
}

/** `runner repl`. Resolves with the exit code (see README: 1 when piped input had a failing chunk). */
export async function replCommand(options: { dryRun: boolean }, ctx: CommandContext): Promise<number> {
  // The REPL opens the data directory (its store: the state module) as `runner run` embedded does.
  const running = await besideLocalMaster(
    ctx.config.dataDir,
    'the REPL opens its data directory itself: stop that master, or start a REPL on a data directory of its own: runner --data-dir <dir> repl',
  );
  if (running) throw running;
  const kernel = await ctx.boot('embedded');
  const runtime = kernel.get(LuaRuntimeRef);
  const modules = kernel
    .get(LuaModulesRef)
    .list()
    .map((m) => m.name)
    .sort();
  const terminal = ctx.isTTY && (ctx.stdin as { isTTY?: boolean }).isTTY === true;
  const repl = new Repl({
    input: ctx.stdin,
    output: ctx.stdout,
    errors: ctx.stderr,
    terminal,
    banner: bannerText(ctx.version, modules, options.dryRun),
    help: helpText(modules),
    openSession: (sinks) =>
      runtime.createSession({
        logger: sinks.logger,
        dryRun: options.dryRun,
        io: { stdout: sinks.stdout, stderr: sinks.stderr },
        chunkName: 'stdin',
      }),
    compile: (source) => runtime.compile(source, 'stdin'),
    history: new HistoryFile(join(ctx.config.dataDir, HISTORY_FILE)),
    cwd: process.cwd(),
    colour: terminal && !process.env.NO_COLOR,
    logLevel: ctx.config.debug ? 'debug' : 'info',
    redactor: ctx.redactor,
    saveHeader: () => `runner repl session saved ${new Date().toISOString()}; replay it with: .load <this file>`,
  });
  return repl.run();
}
