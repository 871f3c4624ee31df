#!/usr/bin/env node
// The `runner` command. Kept as plain JavaScript so the bin link exists before the first build.
import { main } from '../dist/src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
