import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testRuntime } from './test-support.js';

function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'lua-io-'));
  const t = testRuntime();
  return {
    dir,
    ...t,
    values: (source: string, options = {}) => t.values(source, { cwd: dir, ...options }),
    run: (source: string, options = {}) => t.run(source, { cwd: dir, ...options }),
  };
}

describe('io.open and file handles', () => {
  it('writes, appends and reads back, relative to the script directory', async () => {
    const { dir, values } = workspace();
    expect(
      await values(`
        local f = assert(io.open("out.txt", "w"))
        assert(f:write("one\\n", 2, "\\n", 3.5, "\\n") == f)
        f:close()
        local a = assert(io.open("out.txt", "a"))
        a:write("four\\n")
        a:close()
        local r = assert(io.open("out.txt"))
        local all = r:read("a")
        r:close()
        return all, io.type(r), io.type(io.stdout), io.type(42)
      `),
    ).toEqual(['one\n2\n3.5\nfour\n', 'closed file', 'file', null]);
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('one\n2\n3.5\nfour\n');
  });

  it('reads lines, numbers, counts and the rest, as Lua 5.3 does', async () => {
    const { dir, values } = workspace();
    writeFileSync(join(dir, 'data.txt'), 'first line\r\nsecond\n  42  -3.5e2 0x1F nope\nabcdef');
    expect(
      await values(`
        local f = assert(io.open("data.txt", "rb"))
        local l1 = f:read("l")
        local l2 = f:read("L")
        local n1, n2, n3, n4 = f:read("n", "n", "n", "n")
        local rest_of_line = f:read("l")
        local three = f:read(3)
        local zero = f:read(0)
        local tail = f:read("*a")
        local at_eof = { f:read("l", 1, 0) }
        local all_again = f:read("a")
        f:close()
        return l1, l2, n1, n2, n3, n4, rest_of_line, three, zero, tail, at_eof, all_again
      `),
    ).toEqual(['first line\r', 'second\n', 42, -350, 31, null, 'nope', 'abc', '', 'def', {}, '']);
  });

  it('gives the formats of file:read to file:lines and io.lines', async () => {
    const { dir, values } = workspace();
    writeFileSync(join(dir, 'nums.txt'), '1 2\n3 4\n');
    writeFileSync(join(dir, 'names.txt'), 'ann\nbob\n\ncy');
    expect(
      await values(`
        local names = {}
        for line in io.lines("names.txt") do names[#names + 1] = line end
        local sum = 0
        for a, b in io.lines("nums.txt", "n", "n") do sum = sum + a * b end
        local f = assert(io.open("names.txt"))
        local chunks = {}
        for c in f:lines(2) do chunks[#chunks + 1] = c end
        f:close()
        return names, sum, chunks
      `),
    ).toEqual([['ann', 'bob', '', 'cy'], 14, ['an', 'n\n', 'bo', 'b\n', '\nc', 'y']]);
  });

  it('seeks from the start, the current position and the end', async () => {
    const { dir, values } = workspace();
    writeFileSync(join(dir, 'seek.txt'), '0123456789');
    expect(
      await values(`
        local f = assert(io.open("seek.txt", "r+"))
        local size = f:seek("end")
        f:seek("set", 2)
        local two = f:read(2)
        local here = f:seek()
        f:seek("cur", -1)
        f:write("X")
        f:seek("set")
        local all = f:read("a")
        local bad = { f:seek("set", -5) }
        f:close()
        return size, two, here, all, bad[1], bad[2]
      `),
    ).toEqual([10, '23', 4, '012X456789', null, 'Invalid argument']);
  });

  it('fails as C Lua does: nil, message, errno; errors for bad modes and closed files', async () => {
    const { values } = workspace();
    expect(
      await values(`
        local f, err, code = io.open("missing.txt")
        local ok1, e1 = pcall(io.open, "x", "rw")
        local g = io.open("w.txt", "w")
        local r, rerr = g:read("l")
        g:close()
        local ok2, e2 = pcall(g.read, g)
        local ok3, e3 = pcall(io.lines, "missing.txt")
        local ok4, e4 = pcall(function() return io.open("w.txt"):read("x") end)
        return f, err, code, e1, r, rerr, e2, e3, e4
      `),
    ).toEqual([
      null,
      'missing.txt: No such file or directory',
      2,
      // Called through pcall, Lua names the function by its global name.
      "bad argument #2 to 'io.open' (invalid mode)",
      null,
      'Bad file descriptor',
      'attempt to use a closed file',
      'missing.txt: No such file or directory',
      `[string "test"]:9: bad argument #1 to 'read' (invalid format)`,
    ]);
  });

  it('cannot close the standard files', async () => {
    const { values } = workspace();
    expect(await values('return io.stdout:close()')).toEqual([null, 'cannot close standard file']);
  });

  it('closes the files a script leaves open when it ends', async () => {
    const { dir, values } = workspace();
    const openFds = () => readdirSync('/proc/self/fd').length;
    // A first run starts the runtime (in worker mode, worker threads and their event loops' fds).
    // It loops, as the script below does, so that lua.isolation: auto runs both in a worker.
    await values('for i = 1, 2 do end return 1');
    const before = openFds();
    await values(
      'kept = {} for i = 1, 5 do kept[i] = io.open("left-open-" .. i .. ".txt", "w") kept[i]:write("data") end',
    );
    expect(openFds()).toBe(before);
    // Written through at once: there is no stdio buffer to lose.
    expect(readFileSync(join(dir, 'left-open-5.txt'), 'utf8')).toBe('data');
  });

  it('has tmpfile, which vanishes when closed', async () => {
    const { values } = workspace();
    expect(
      await values('local f = io.tmpfile() f:write("abc") f:seek("set") local s = f:read("a") f:close() return s'),
    ).toEqual(['abc']);
  });
});

describe('standard streams and default files', () => {
  it('reads io.read and io.lines from the stdin option, empty by default', async () => {
    const { values } = workspace();
    expect(
      await values('return io.read("l"), io.read("n"), io.read("a")', { io: { stdin: 'hello\n12 rest' } }),
    ).toEqual(['hello', 12, ' rest']);
    expect(
      await values('local n = 0 for l in io.lines() do n = n + 1 end return n', { io: { stdin: 'a\nb\nc' } }),
    ).toEqual([3]);
    expect(await values('return io.read("l"), io.read("a")')).toEqual([null, '']);
  });

  it('redirects io.write and io.read with io.output and io.input', async () => {
    const { dir, values, logger } = workspace();
    expect(
      await values(`
        io.output("redirected.txt")
        io.write("to the file\\n")
        io.close()
        io.output(io.stdout)
        io.input("redirected.txt")
        local back = io.read("l")
        io.write("to the log\\n")
        return back
      `),
    ).toEqual(['to the file']);
    expect(readFileSync(join(dir, 'redirected.txt'), 'utf8')).toBe('to the file\n');
    expect(logger.messages()).toEqual(['to the log']);
  });
});

describe('io.popen', () => {
  it('reads what a command prints, and its exit status on close', async () => {
    const { values } = workspace();
    expect(
      await values(`
        local p = io.popen("echo hello; echo world; exit 3")
        local first = p:read("l")
        local rest = p:read("a")
        return first, rest, p:close()
      `),
    ).toEqual(['hello', 'world\n', null, 'exit', 3]);
  });

  it('gives a command what is written to it', async () => {
    const { dir, values } = workspace();
    expect(await values('local p = io.popen("cat > piped.txt", "w") p:write("via stdin") return p:close()')).toEqual([
      true,
      'exit',
      0,
    ]);
    expect(readFileSync(join(dir, 'piped.txt'), 'utf8')).toBe('via stdin');
  });

  it('runs nothing in dry-run', async () => {
    const { dir, values, logger } = workspace();
    expect(
      await values('local p = io.popen("touch made.txt") return p:read("a"), p:close()', { dryRun: true }),
    ).toEqual(['', true, 'exit', 0]);
    expect(existsSync(join(dir, 'made.txt'))).toBe(false);
    expect(logger.messages()).toEqual(['dry-run: not running io.popen command: touch made.txt']);
  });
});
