#!/usr/bin/env node
// The `runner` command. Kept as plain JavaScript so the bin link exists before the first build.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// `runner --version` answers from the manifest without loading the kernel or any plugin: it is
// what scripts and health checks call most, and it needs nothing else (test/bench/cli-startup.mjs).
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
  process.exit(0);
}

// A command that ends within a second compiles sql.js's WebAssembly with Liftoff alone: V8's
// optimizing tier costs ~170 ms of CPU per process and pays off only in a long-running master or
// agent (test/bench/cli-startup.mjs, a one-task `runner run`: CPU p50 ~650 ms to ~480 ms).
const LONG_RUNNING = new Set(['server', 'ui', 'agent start', 'repl']);
// The command's words: global options and the values of those that take one are not among them.
const GLOBAL_VALUES = new Set(['--data-dir', '--config', '--plugins-dir', '--ca']);
const words = argv.filter((a, i) => !a.startsWith('-') && !GLOBAL_VALUES.has(argv[i - 1]));
if (!LONG_RUNNING.has(words[0]) && !LONG_RUNNING.has(words.slice(0, 2).join(' '))) {
  (await import('node:v8')).setFlagsFromString('--liftoff-only');
}

// The kernel and plugins are one script compiled through V8's code cache (kernel/dist/runtime.cjs,
// see kernel/src/runtime-loader.ts); what a command compiles differs from another's, so a run, the
// help and the other commands keep a cache each.
createRequire(import.meta.url)('../dist/runtime-loader.cjs').useCacheVariant(
  words.length === 0 ? 'help' : words[0] === 'run' ? 'run' : 'cli',
);
const { main } = await import('../dist/src/cli/main.js');

// `runner ... | head` closes the pipe early; that is the reader's choice, not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

// main resolves once the command is over: its kernels are stopped and the log is flushed. What a
// plugin left running past its stop (a timer a timed-out setup leaked) must not keep the process.
// Writes to pipes and files are synchronous on Linux, so exiting here loses no output.
process.exit(await main(argv));
