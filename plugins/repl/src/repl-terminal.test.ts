import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hasTool } from '../../../test/support/tools.js';
import { runnerBin, tempDir, TmuxPane } from './test-support.js';

// A real terminal: tmux runs `runner repl` in a pane, and the assertions read the screen it renders.
const moduleCount = (
  JSON.parse(
    execFileSync(process.execPath, [runnerBin, 'modules', 'list', '--output', 'json'], { encoding: 'utf8' }),
  ) as unknown[]
).length;
const BANNER = `runner 0.1.0 Lua 5.3 REPL — ${moduleCount} modules — .help for help and their names`;

describe.skipIf(!hasTool('tmux', 'tmux'))('runner repl on a terminal', () => {
  let pane: TmuxPane | undefined;
  afterEach(() => pane?.stop());

  function start(dataDir: string, args = ''): TmuxPane {
    pane = new TmuxPane(dataDir);
    pane.start(`env RUNNER_DATA_DIR=${dataDir} ${process.execPath} ${runnerBin} repl ${args}`);
    return pane;
  }

  it('prompts, continues unfinished chunks, stops a spinning chunk on Ctrl-C, and writes the history', async () => {
    const dataDir = tempDir();
    const p = start(dataDir);
    await p.untilTail([BANNER, '>']);

    p.line('x = 5');
    await p.untilTail(['> x = 5', '>']);
    p.line('x * 2');
    await p.untilTail(['> x * 2', '10', '>']);

    p.line('function f(a)');
    await p.untilTail(['> function f(a)', '>>']);
    p.line('  return a + 1');
    await p.untilTail(['>>   return a + 1', '>>']);
    p.line('end');
    await p.untilTail(['>> end', '>']);
    p.line('f(1), { 1, "two" }');
    await p.untilTail(['> f(1), { 1, "two" }', '2\t{ 1, "two" }'.replace('\t', '       '), '>']);

    // Ctrl-C on a continuation line drops the whole unfinished chunk.
    p.line('for i = 1, 3 do');
    await p.untilTail(['> for i = 1, 3 do', '>>']);
    p.keys('C-c');
    await p.untilTail(['> for i = 1, 3 do', '>>', '>']);
    p.line('"fresh chunk"');
    await p.untilTail(['> "fresh chunk"', 'fresh chunk', '>']);

    // Ctrl-C while a chunk spins stops that chunk only.
    p.line('print("spinning") while true do end');
    await p.untilTail(['> print("spinning") while true do end', 'spinning']);
    p.keys('C-c');
    await p.untilTail(['spinning', 'interrupted', '>']);
    p.line('x');
    await p.untilTail(['> x', '5', '>']);

    // Ctrl-C with text on the line discards the text; on an empty line it warns, twice it exits.
    p.keys('-l', 'half typed');
    await p.untilTail(['> half typed']);
    p.keys('C-c');
    await p.untilTail(['> half typed', '>']);
    p.keys('C-c');
    await p.untilTail(['>', '(to exit, press Ctrl-C again or type .exit)', '>']);
    p.keys('C-c');
    expect(await p.exited()).toBe(0);

    expect(readFileSync(join(dataDir, 'repl_history'), 'utf8')).toBe(
      [
        'x = 5',
        'x * 2',
        'function f(a)',
        '  return a + 1',
        'end',
        'f(1), { 1, "two" }',
        'for i = 1, 3 do',
        '"fresh chunk"',
        'print("spinning") while true do end',
        'x',
        '',
      ].join('\n'),
    );
  });

  it('recalls the previous sessions’ history with the arrow keys and exits on Ctrl-D', async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'repl_history'), 'older = 1\nanswer = 42\n"latest"\n');
    const p = start(dataDir);
    await p.untilTail([BANNER, '>']);
    p.keys('Up');
    await p.untilTail(['> "latest"']);
    p.keys('Up');
    await p.untilTail(['> answer = 42']);
    p.keys('Enter');
    await p.untilTail(['> answer = 42', '>']);
    p.line('answer');
    await p.untilTail(['> answer', '42', '>']);
    p.keys('C-d');
    expect(await p.exited()).toBe(0);
    expect(readFileSync(join(dataDir, 'repl_history'), 'utf8')).toBe(
      'older = 1\nanswer = 42\n"latest"\nanswer = 42\nanswer\n',
    );
  });

  it('.clear clears the screen and the session; log lines and errors show on the screen', async () => {
    const dataDir = tempDir();
    const p = start(dataDir, '--dry-run');
    const banner = BANNER.replace('REPL', 'REPL (dry run)');
    await p.untilTail([banner, '>']);
    p.line('kept = 1');
    await p.untilTail(['> kept = 1', '>']);
    p.line('log.info("hello", { n = 1 }) nope()');
    await p.untilTail([
      '> log.info("hello", { n = 1 }) nope()',
      'INFO  hello  n=1',
      "stdin:1: attempt to call a nil value (global 'nope')",
      '>',
    ]);
    p.line('.clear');
    const screen = await p.until((l) => l.length === 2, 'a cleared screen');
    expect(screen).toEqual([banner, '>']);
    p.line('kept, dry_run');
    await p.untilTail(['> kept, dry_run', 'nil     true', '>']);
    p.line('.exit');
    expect(await p.exited()).toBe(0);
    expect(existsSync(join(dataDir, 'repl_history'))).toBe(true);
  });
});
