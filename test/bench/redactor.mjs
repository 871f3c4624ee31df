// The redactor's cost where everything passes it: the kernel logger (a line with fields, at a
// level the file keeps) and one task result as the run store writes it, with no secret registered
// and with 20 registered. Runs against the built code (`node build.mjs` first).
//
//   node test/bench/redactor.mjs [--lines 50000] [--root <checkout>]
//
// --root measures another checkout's build (e.g. main before the redactor) for the logger figure;
// the redactor figures need this one. Prints readable lines, then one JSON line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { lines: { type: 'string', default: '50000' }, root: { type: 'string' } },
});
const root = resolve(values.root ?? join(import.meta.dirname, '../..'));
const lines = Number(values.lines);
const kernel = await import(pathToFileURL(join(root, 'kernel/dist/index.js')).href);
const sdk = await import(pathToFileURL(join(root, 'plugin-sdk/dist/index.js')).href);

const secrets = Array.from({ length: 20 }, (_, i) => `secret-value-${i}-${'x'.repeat(i)}`);

async function loggerFigure(withSecrets) {
  const dataDir = mkdtempSync(join(tmpdir(), 'runner-bench-redact-'));
  const redactor = sdk.createRedactor?.();
  if (withSecrets && redactor) for (const s of secrets) redactor.addSecret(s);
  const logger = await kernel.createLogger({ dataDir, level: 'info', redactor });
  const child = logger.child({ plugin: 'engine', run_id: 'r-1' });
  const fields = { workflow: 'deploy', task: 'build', duration: 0.0123, status: 'succeeded', attempt: 1 };
  for (let i = 0; i < 2000; i++) child.info('task finished', fields);
  const started = performance.now();
  for (let i = 0; i < lines; i++) child.info('task finished with a message of ordinary length', fields);
  const elapsed = performance.now() - started;
  await logger.flush();
  rmSync(dataDir, { recursive: true, force: true });
  return (elapsed * 1000) / lines;
}

function recordFigure(withSecrets) {
  const redactor = sdk.createRedactor();
  if (withSecrets) for (const s of secrets) redactor.addSecret(s);
  const result = {
    name: 'build',
    status: 'succeeded',
    message: 'built version 1.2.3 in 12 s',
    outputs: { version: '1.2.3', artifacts: ['a.tar.gz', 'b.tar.gz'], meta: { sha: 'abc123', size: 12345 } },
    log: Array.from({ length: 20 }, (_, i) => ({
      timestamp: new Date().toISOString(),
      level: 'info',
      message: `step ${i} done: compiled 143 files, 0 warnings, output in /tmp/build/step-${i}`,
      fields: { step: i },
    })),
  };
  const count = 20000;
  for (let i = 0; i < 2000; i++) redactor.redact(result);
  const started = performance.now();
  for (let i = 0; i < count; i++) redactor.redact(result);
  return ((performance.now() - started) * 1000) / count;
}

const figures = {
  logger_line_us: await loggerFigure(false),
  logger_line_20_secrets_us: sdk.createRedactor ? await loggerFigure(true) : null,
  record_redact_us: sdk.createRedactor ? recordFigure(false) : null,
  record_redact_20_secrets_us: sdk.createRedactor ? recordFigure(true) : null,
};
const f = (n) => (n === null ? 'n/a' : `${n.toFixed(2)} us`);
console.log(`redactor bench (${root})`);
console.log(
  `logger: one info line with 5 fields ${f(figures.logger_line_us)}; with 20 secrets registered ${f(figures.logger_line_20_secrets_us)}`,
);
console.log(
  `run record: one task result (20 log lines) ${f(figures.record_redact_us)}; with 20 secrets ${f(figures.record_redact_20_secrets_us)}`,
);
console.log(JSON.stringify({ bench: 'redactor', root, lines, ...figures }));
