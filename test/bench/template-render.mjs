// What rendering a small cached template costs, Jinja and Go syntax: the template engine
// (plugins/template/src/engine.ts) in this process, warmed up, then timed over many calls. Typical
// figures are a few microseconds a call; no target in an issue (the engine's test asserts what
// it renders, this says how fast).
//
//   node test/bench/template-render.mjs [--runs 5000]
//
// Prints readable lines, then one JSON line.
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { importSource } from './support/source.mjs';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5000' } } });
const runs = Number(values.runs);
const { createTemplateEngine } = await importSource('plugins/template/src/engine.ts');
const engine = createTemplateEngine();

/** Microseconds a call, once warm (the JIT's first passes are not the steady state). */
function measure(source, syntax, ctx) {
  for (let i = 0; i < 2000; i++) engine.render(source, ctx, { syntax });
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) engine.render(source, ctx, { syntax });
  return Number(process.hrtime.bigint() - start) / 1000 / runs;
}

const ctx = { vars: { app: 'web', hosts: ['web-1', 'web-2'] }, item: 'web-1' };
const jinja = measure('deploy {{ vars.app }} to {{ item }}: {{ vars.hosts | join(",") }}', 'jinja', ctx);
const go = measure('deploy {{ .vars.app }} to {{ .item }}: {{ join "," .vars.hosts }}', 'go', ctx);
const round = (n) => Math.round(n * 100) / 100;
console.log(`render of a cached small template: jinja ${round(jinja)} µs, go ${round(go)} µs a call (${runs} calls)`);
console.log(
  JSON.stringify({
    bench: 'template-render',
    runs,
    jinja_us: round(jinja),
    go_us: round(go),
    machine: { cpus: cpus().length, loadavg_at_end: round(loadavg()[0]) },
  }),
);
