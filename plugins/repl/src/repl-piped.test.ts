import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { outputMatching, pipeRepl, spawnRepl, tempDir } from './test-support.js';

// These run the built `runner` (test/global-setup.ts builds once before any test file).

let dataDir: string;
beforeEach(() => {
  dataDir = tempDir();
});

const lines = (...l: string[]) => l.map((x) => `${x}\n`).join('');

describe('runner repl with piped input', () => {
  it('prints expression results like lua, runs statements, shows print output', async () => {
    const result = await pipeRepl(
      lines(
        '1 + 2',
        'x = 10',
        'x * 2, "text", nil, true',
        'print("hi", 1)',
        '{ 3, 1, { b = "x", a = 1.5 }, [10] = false }',
        '{ z = 1, ["a b"] = 2, [2] = 3, ["end"] = 4 }',
        '1/0, 2^53, 0.1',
        'local hidden = 1',
        'hidden',
        'type(print)',
        '=x',
      ),
      { dataDir },
    );
    expect(result).toEqual({
      code: 0,
      stdout: lines(
        '3',
        '20\ttext\tnil\ttrue',
        'hi\t1',
        '{ [1] = 3, [2] = 1, [3] = { a = 1.5, b = "x" }, [10] = false }',
        '{ [2] = 3, ["a b"] = 2, ["end"] = 4, z = 1 }',
        'inf\t9.007199254741e+15\t0.1',
        'nil',
        'function',
        '10',
      ),
      stderr: '',
    });
  });

  it('reads multi-line chunks until they compile, and goes on after errors (exit code 1)', async () => {
    const result = await pipeRepl(
      lines(
        'function add(a,',
        '    b)',
        '  return a + b',
        'end',
        'add(2, 3)',
        'x = = 1',
        '"after a syntax error"',
        'foo()',
        'error("boom")',
        't = {',
        '  n = 1,',
        '}',
        't.n',
      ),
      { dataDir },
    );
    expect(result).toEqual({
      code: 1,
      stdout: lines('5', 'after a syntax error', '1'),
      stderr: lines(
        "stdin:1: unexpected symbol near '='",
        "stdin:1: attempt to call a nil value (global 'foo')",
        'stdin:1: boom',
      ),
    });
  });

  it('exits 0 at the end of input when every chunk succeeded, and reports a chunk cut short by EOF', async () => {
    expect(await pipeRepl('"a"\n"no newline at the end"', { dataDir })).toEqual({
      code: 0,
      stdout: lines('a', 'no newline at the end'),
      stderr: '',
    });
    expect(await pipeRepl(lines('"a"', 'for i = 1, 2 do', '  print(i)'), { dataDir })).toEqual({
      code: 1,
      stdout: lines('a'),
      stderr: lines("stdin:2: 'end' expected (to close 'for' at line 1) near <eof>"),
    });
    expect(await pipeRepl('', { dataDir })).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('.exit stops reading, and its code says whether a chunk failed', async () => {
    expect(await pipeRepl(lines('1', '.exit', '2'), { dataDir })).toEqual({ code: 0, stdout: lines('1'), stderr: '' });
    expect(await pipeRepl(lines('nil + 1', '.exit', '2'), { dataDir })).toEqual({
      code: 1,
      stdout: '',
      stderr: lines('stdin:1: attempt to perform arithmetic on a nil value'),
    });
  });

  it('.help lists the commands and where module documentation is', async () => {
    const result = await pipeRepl(lines('.help'), { dataDir });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const help = result.stdout.split('\n');
    for (const command of ['.help', '.exit', '.clear', '.load <file>', '.save <file>'])
      expect(help.some((l) => l.startsWith(`${command} `))).toBe(true);
    const modules = help.find((l) => l.startsWith('Modules are globals: '));
    for (const name of ['exec', 'file', 'docker', 'pkg', 'ssh', 'template']) expect(modules).toContain(` ${name},`);
    expect(help).toContain("A module's functions and documentation: runner modules info <name>");
  });

  it('refuses an unknown command and commands without their file', async () => {
    expect(await pipeRepl(lines('.xyz', '.load', '.save', '"still running"'), { dataDir })).toEqual({
      code: 1,
      stdout: lines('still running'),
      stderr: lines(
        'unknown command .xyz (.help lists the commands)',
        '.load needs a file: .load <file>',
        '.save needs a file: .save <file>',
      ),
    });
  });

  it('.clear starts a fresh session that has forgotten the globals', async () => {
    const result = await pipeRepl(lines('x = 1', 'string.custom = true', '.clear', 'x, string.custom', 'exec ~= nil'), {
      dataDir,
    });
    expect(result).toEqual({ code: 0, stdout: lines('nil\tnil', 'true'), stderr: '' });
  });

  it('.save writes the successful chunks as a script that .load replays after .clear', async () => {
    const dir = tempDir('runner-repl-files-');
    const result = await pipeRepl(
      lines(
        'count = 1',
        'function bump(n)',
        '  count = count + n -- grow',
        '  return count',
        'end',
        'bump(1)',
        'local scratch = 5',
        'undefined_function()',
        'return count',
        'list = { "a", "b" }',
        '.save session.lua',
        '.clear',
        'count',
        '.load session.lua',
        'count, bump(10), scratch, list[2]',
      ),
      { dataDir, cwd: dir },
    );
    expect(result).toEqual({
      code: 1,
      stdout: lines('2', '2', 'saved 6 chunks to session.lua', 'nil', '2\t12\tnil\tb'),
      stderr: lines("stdin:1: attempt to call a nil value (global 'undefined_function')"),
    });
    const saved = readFileSync(join(dir, 'session.lua'), 'utf8');
    expect(saved.replace(/^-- .*\n/, '')).toBe(
      lines(
        'do count = 1 end',
        'do',
        'function bump(n)',
        '  count = count + n -- grow',
        '  return count',
        'end',
        'end',
        'do bump(1) end',
        'do local scratch = 5 end',
        'do',
        '(function(...)',
        'return count',
        'end)(...)',
        'end',
        'do list = { "a", "b" } end',
      ),
    );
    expect(saved).toMatch(/^-- runner repl session saved \S+; replay it with: \.load <this file>\n/);
  });

  it('.load prints what the file returns and names the file in its errors', async () => {
    const dir = tempDir('runner-repl-files-');
    writeFileSync(join(dir, 'lib.lua'), '#!/usr/bin/env lua\nloaded = true\nreturn 1, { k = "v" }\n');
    writeFileSync(join(dir, 'broken.lua'), 'x = 1\ny = = 2\n');
    writeFileSync(join(dir, 'fails.lua'), 'local t = nil\n\nreturn t.field\n');
    const result = await pipeRepl(
      lines(
        '.load lib.lua',
        'loaded',
        '.load broken.lua',
        '.load "fails.lua"',
        '.load missing.lua',
        'x',
        // A loaded file is part of what .save writes.
        '.save again.lua',
        '.clear',
        '.load again.lua',
        'loaded',
      ),
      { dataDir, cwd: dir },
    );
    expect(result).toEqual({
      code: 1,
      stdout: lines('1\t{ k = "v" }', 'true', 'nil', 'saved 3 chunks to again.lua', 'true'),
      stderr: lines(
        "broken.lua:2: unexpected symbol near '='",
        "fails.lua:3: attempt to index a nil value (local 't')",
        '.load: cannot read missing.lua: no such file or directory',
      ),
    });
  });

  it('loads every module: exec, state, log, template...', async () => {
    const result = await pipeRepl(
      lines(
        'exec.run("echo hi").stdout',
        'state.set("greeting", "hello")',
        'state.get("greeting")',
        'log.info("deployed", { version = "1.2", hosts = 3 })',
        'log.warn("careful")',
        'io.write("partial")',
        '"next line"',
        'dry_run',
      ),
      { dataDir },
    );
    expect(result.stderr).toBe(lines('INFO  deployed  hosts=3 version=1.2', 'WARN  careful'));
    expect(result.stdout).toBe(
      lines('hi', '', '{ changed = true }', 'hello', 'partial', '<userdata>', 'next line', 'false'),
    );
    expect(result.code).toBe(0);
  });

  it('keeps state across REPL runs of the same data directory', async () => {
    await pipeRepl(lines('state.set("n", 41)'), { dataDir });
    expect(await pipeRepl(lines('state.get("n") + 1'), { dataDir })).toEqual({
      code: 0,
      stdout: lines('42'),
      stderr: '',
    });
  });

  it('--dry-run only says what side effects would do', async () => {
    const dir = tempDir('runner-repl-files-');
    const result = await pipeRepl(lines('dry_run', 'exec.run("touch made").note', 'file.exists("made")'), {
      dataDir,
      cwd: dir,
      args: ['--dry-run'],
    });
    expect(result).toEqual({
      code: 0,
      stdout: lines('true', 'dry-run: would run: touch made', 'false'),
      stderr: '',
    });
  });

  it('truncates deep and large tables', async () => {
    const result = await pipeRepl(
      lines('{ a = { b = { c = { d = { e = 1 } } } } }', 'big = {} for i = 1, 60 do big[i] = i end', 'big'),
      { dataDir },
    );
    expect(result.stdout.split('\n')[0]).toBe('{ a = { b = { c = { d = {...} } } } }');
    expect(result.stdout.split('\n')[1]).toMatch(/^\{ 1, 2, 3, .*, 49, 50, \.\.\. 10 more \}$/);
  });

  it('Ctrl-C (SIGINT) stops a running chunk and the REPL goes on; at rest it ends the REPL', async () => {
    const child = spawnRepl({ dataDir });
    child.stdin!.write(lines('kept = "yes"', 'print("spinning") while true do end'));
    await outputMatching(child, 'stdout', /spinning\n/);
    child.kill('SIGINT');
    child.stdin!.write(lines('kept'));
    await outputMatching(child, 'stdout', /yes\n/);
    child.kill('SIGINT');
    expect(await child.exited).toEqual({ code: 130, signal: null });
    expect(child.out).toEqual({ stdout: lines('spinning', 'yes'), stderr: lines('interrupted') });
  });
});
