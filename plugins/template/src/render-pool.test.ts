// Templates whose cost is not bounded render in a worker process, stopped at their timeout and
// heap limit: the bombs that froze a master (nested loops over a list made once, a string's
// characters, `center(100000000)`) leave the caller's event loop turning and fail naming the limit.
import { afterAll, describe, expect, it } from 'vitest';
import { RunnerError, TemplateError } from '@runner/plugin-sdk';
import { createTemplateEngine } from './engine.js';
import { RenderPool } from './render-pool.js';

const engine = createTemplateEngine({ workers: new RenderPool({ max: 2 }) });
afterAll(() => engine.close());

const BOMBS = {
  'a list made once, looped twice':
    '{% set s = range(0, 3000) %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}ok',
  "a string's characters, looped twice":
    '{% set s = "x".repeat(3000) %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}ok',
  'a filter padding to a width': '{{ "x" | center(100000000) | length }}',
};

describe("which templates render on the caller's thread", () => {
  it('lookups, comparisons, conditions and linear filters are bounded', () => {
    for (const source of [
      'plain text',
      '{{ vars.app }} {{ tasks.build.outputs.n + 1 }}',
      '{{ vars.a == "x" and not vars.b }}',
      '{% if vars.x is defined %}{{ vars.x | default("y") | upper }}{% endif %}',
      '{{ vars.hosts | join(",") }} {{ vars.hosts | length }}',
      // One loop over the context's data or a small literal range.
      '{% for h in vars.hosts %}{{ h | upper }}{% endfor %}',
      '{% for i in range(3) %}{{ i }}{% endfor %}',
    ])
      expect(engine.isBounded(source, 'jinja'), source).toBe(true);
    expect(engine.isBounded('{{ .vars.app }} {{ if eq .vars.a "x" }}{{ .vars.b | upper }}{{ end }}', 'go')).toBe(true);
    expect(engine.isBounded('{{ range .vars.hosts }}{{ . }}{{ end }}', 'go')).toBe(true);
  });

  it('loops, set, macros, calls and other filters are not', () => {
    for (const source of [
      ...Object.values(BOMBS),
      '{% for h in vars.hosts %}{% for g in vars.hosts %}{% endfor %}{% endfor %}',
      '{% for i in range(0, 100000) %}{% endfor %}',
      '{% for c in vars.s.split(",") %}{% endfor %}',
      '{{ vars.s.split(",") }}',
      '{% set x = 1 %}{{ x }}',
      '{{ vars.s | regex_replace("a+", "b") }}',
      '{% macro m() %}{% endmacro %}',
      '{{ vars.s is match("a+") }}',
    ])
      expect(engine.isBounded(source, 'jinja'), source).toBe(false);
    expect(engine.isBounded('{{ range .vars.hosts }}{{ range .vars.hosts }}{{ end }}{{ end }}', 'go')).toBe(false);
    expect(engine.isBounded('{{ range 100000 }}{{ end }}', 'go')).toBe(false);
    expect(engine.isBounded('{{ printf "%9999999d" 1 }}', 'go')).toBe(false);
  });
});

describe('renderBounded', () => {
  it('renders bounded and unbounded templates alike, errors with their position', async () => {
    const context = { vars: { hosts: ['a', 'b'], app: 'web' } };
    const options = { syntax: 'jinja' as const, timeoutMs: 30_000, memoryLimitBytes: 64 * 1024 * 1024 };
    expect(await engine.renderBounded('{{ vars.app }}', context, options)).toBe('web');
    expect(await engine.renderBounded('{% for h in vars.hosts %}{{ h }};{% endfor %}', context, options)).toBe('a;b;');
    expect(await engine.renderBounded('{{ vars.app.split("e") | join(";") }}', context, options)).toBe('w;b');
    expect(await engine.evaluateBounded('vars.hosts | length == 2', context, options)).toBe(true);
    const error = await engine
      .renderBounded('{% for h in vars.hosts %}{{ vars.nope }}{% endfor %}', context, {
        ...options,
        name: 'task t script',
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemplateError);
    expect((error as TemplateError).message).toMatch(
      /unknown template variable "vars.nope" at line 1, column \d+ in task t script/,
    );
  });

  it.each(Object.entries(BOMBS))('stops %s at its timeout while this thread keeps turning', async (_, source) => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const error = await engine
      .renderBounded(
        source,
        {},
        { syntax: 'jinja', name: 'task bomb when', timeoutMs: 400, memoryLimitBytes: 256 * 1024 * 1024 },
      )
      .catch((e: unknown) => e);
    clearInterval(timer);
    expect(error).toBeInstanceOf(RunnerError);
    expect((error as RunnerError).code).toBe('timeout');
    expect((error as Error).message).toBe("task bomb when: rendering timed out after 400 ms (the task's timeout)");
    expect(ticks).toBeGreaterThan(0);
    // The stopped worker was replaced: the next rendering works.
    expect(
      await engine.renderBounded(
        '{% for i in range(2) %}{{ i }}{% endfor %}',
        {},
        { syntax: 'jinja', memoryLimitBytes: 256 * 1024 * 1024 },
      ),
    ).toBe('01');
  });

  it('ends a rendering when its signal aborts, with the reason', async () => {
    const controller = new AbortController();
    const pending = engine.renderBounded(
      BOMBS['a list made once, looped twice'],
      {},
      { syntax: 'jinja', signal: controller.signal, memoryLimitBytes: 256 * 1024 * 1024 },
    );
    setTimeout(() => controller.abort(new RunnerError('cancelled', 'cancelled by alice')), 200);
    await expect(pending).rejects.toThrow('cancelled by alice');
  });

  it('stops a rendering past its heap limit, saying so', async () => {
    // One allocation far past the limit, then more: what ended a whole process from a thread.
    const source = '{% set a = "x ".repeat(30000000).split(" ") %}{{ a.concat(a, a) | length }}';
    const error = await engine
      .renderBounded(
        source,
        {},
        { syntax: 'jinja', name: 'task hog loop', timeoutMs: 60_000, memoryLimitBytes: 64 * 1024 * 1024 },
      )
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /^task hog loop: rendering used more than 64 MiB \(the task's memory limit\) and was stopped$/,
    );
  });
});
