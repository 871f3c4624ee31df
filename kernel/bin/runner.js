#!/usr/bin/env node
// The `runner` command. Kept as plain JavaScript so the bin link exists before the first build.
import { readFileSync } from 'node:fs';

// `runner --version` answers from the manifest without loading the kernel or any plugin: it is
// what scripts and health checks call most, and it needs nothing else (test/bench/cli-startup.mjs).
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
  process.exit(0);
}

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
