import { existsSync, mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testRuntime } from './test-support.js';

function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'lua-os-'));
  const t = testRuntime();
  return { dir, ...t, values: (source: string, options = {}) => t.values(source, { cwd: dir, ...options }) };
}

describe('os', () => {
  it('reads os.getenv from the env option (the process environment by default)', async () => {
    const { values } = workspace();
    expect(await values('return os.getenv("GREETING"), os.getenv("NOPE")', { env: { GREETING: 'hej' } })).toEqual([
      'hej',
      null,
    ]);
    expect(await values('return os.getenv("PATH")')).toEqual([process.env.PATH]);
  });

  it('removes and renames files (and empty directories) relative to the script directory', async () => {
    const { dir, values } = workspace();
    writeFileSync(join(dir, 'a.txt'), 'a');
    writeFileSync(join(dir, 'gone.txt'), 'x');
    mkdirSync(join(dir, 'empty'));
    expect(
      await values(`
        local renamed = os.rename("a.txt", "b.txt")
        local removed = os.remove("gone.txt")
        local dir_removed = os.remove("empty")
        local r1, e1, c1 = os.remove("gone.txt")
        local r2, e2 = os.rename("nope.txt", "x.txt")
        return renamed, removed, dir_removed, r1, e1, c1, r2, e2
      `),
    ).toEqual([
      true,
      true,
      true,
      null,
      'gone.txt: No such file or directory',
      2,
      null,
      'nope.txt: No such file or directory',
    ]);
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('a');
    expect(existsSync(join(dir, 'gone.txt'))).toBe(false);
  });

  it('makes tmpname a new, empty file of its own', async () => {
    const { values } = workspace();
    const [a, b] = (await values('return os.tmpname(), os.tmpname()')) as string[];
    expect(a).not.toBe(b);
    expect(readFileSync(a, 'utf8')).toBe('');
  });

  it('has date, time, clock and difftime', async () => {
    const { values } = workspace();
    const [now, year, iso, t, clock, diff, fields] = await values(`
      local now = os.time()
      return now, os.date("%Y"), os.date("!%Y-%m-%dT%H:%M:%S", 0), os.time({ year = 2024, month = 2, day = 29, hour = 12 }),
        os.clock(), os.difftime(now + 90, now), os.date("!*t", 86400)
    `);
    expect(Math.abs((now as number) - Date.now() / 1000)).toBeLessThan(5);
    expect(year).toBe(String(new Date().getFullYear()));
    expect(iso).toBe('1970-01-01T00:00:00');
    expect(t).toBe(Math.floor(new Date(2024, 1, 29, 12).getTime() / 1000));
    expect(clock).toBeGreaterThan(0);
    expect(diff).toBe(90);
    expect(fields).toEqual({ year: 1970, month: 1, day: 2, hour: 0, min: 0, sec: 0, wday: 6, yday: 2, isdst: false });
  });

  it('formats os.date with the C99 conversions, in UTC with "!"', async () => {
    const { values } = workspace();
    // 2021-01-03 is a Sunday in ISO week 53 of 2020.
    const t = Date.UTC(2021, 0, 3, 14, 5, 9) / 1000;
    expect(
      await values(`local t = ${t}
        return os.date("!%a %A %b %B %d %e %H %I %j %m %M %p %S %u %w %y %Y %Z %%", t),
          os.date("!%c|%D|%F|%R|%T|%r|%x|%X|%t|%n", t), os.date("!%G-W%V %g %U %W %C %Ey %OH", t)`),
    ).toEqual([
      'Sun Sunday Jan January 03  3 14 02 003 01 05 PM 09 7 0 21 2021 GMT %',
      'Sun Jan  3 14:05:09 2021|01/03/21|2021-01-03|14:05|14:05:09|02:05:09 PM|01/03/21|14:05:09|\t|\n',
      '2020-W53 20 01 00 20 21 14',
    ]);
    expect(await values('return pcall(os.date, "%Q")')).toEqual([
      false,
      "bad argument #1 to 'os.date' (invalid conversion specifier '%Q')",
    ]);
  });

  it('raises an error for os.exit, which the script may catch', async () => {
    const { values } = workspace();
    expect(await values('local ok, e = pcall(function() os.exit(0) end) return ok, e')).toEqual([
      false,
      '[string "test"]:1: os.exit cannot end the runner (return false to fail a task, error() to stop a script)',
    ]);
  });

  it('runs os.execute through the shell without blocking, output to the log', async () => {
    const { values, logger } = workspace();
    expect(await values('return os.execute("echo out; echo err >&2; exit 4")')).toEqual([null, 'exit', 4]);
    expect(logger.lines).toEqual([
      { level: 'info', message: 'out', fields: { stream: 'stdout' } },
      { level: 'warn', message: 'err', fields: { stream: 'stderr' } },
    ]);
    expect(await values('local ok, how, code = os.execute("true") return ok, how, code, os.execute()')).toEqual([
      true,
      'exit',
      0,
      true,
    ]);
    expect(await values('return os.execute("kill -TERM $$")')).toEqual([null, 'signal', 15]);
  });

  it('runs no command in dry-run', async () => {
    const { dir, values } = workspace();
    expect(await values('return os.execute("touch made.txt")', { dryRun: true })).toEqual([true, 'exit', 0]);
    expect(existsSync(join(dir, 'made.txt'))).toBe(false);
  });

  it('stops a command when the script times out', async () => {
    const { values } = workspace();
    const started = performance.now();
    await expect(values('os.execute("sleep 120")', { timeoutMs: 50 })).rejects.toMatchObject({ code: 'timeout' });
    // A ceiling far below the sleep's 120 s, not a speed target.
    expect(performance.now() - started).toBeLessThan(30_000);
  });
});

describe('what fengari leaves out or would break', () => {
  it('answers collectgarbage instead of failing', async () => {
    const { values } = workspace();
    const [count, collected, running] = await values(
      'return collectgarbage("count"), collectgarbage(), collectgarbage("isrunning")',
    );
    expect(count).toBeGreaterThan(0);
    expect([collected, running]).toEqual([0, true]);
  });

  it('refuses debug.sethook, debug.debug and package.loadlib with clear errors', async () => {
    const { values } = workspace();
    expect(
      await values(
        'return select(2, pcall(debug.sethook)), select(2, pcall(debug.debug)), select(2, pcall(package.loadlib, "x", "y"))',
      ),
    ).toEqual([
      'debug.sethook is not available in a task (the runtime uses the hook for time slices and timeouts)',
      'debug.debug is not available in a task (it would block the runner)',
      'package.loadlib is not available in a task',
    ]);
  });

  it('keeps require for Lua files on package.path', async () => {
    const { dir, values } = workspace();
    writeFileSync(join(dir, 'helper.lua'), 'return { twice = function(x) return 2 * x end }');
    expect(await values(`package.path = "${dir}/?.lua" return require("helper").twice(21)`)).toEqual([42]);
  });
});
