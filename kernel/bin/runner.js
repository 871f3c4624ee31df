#!/usr/bin/env node
// The `runner` command. Kept as plain JavaScript so the bin link exists before the first build.
import { main } from '../dist/src/cli/main.js';

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
process.exit(await main(process.argv.slice(2)));
