#!/usr/bin/env node
// Writes the master's OpenAPI document to a file (default ui/src/lib/api/openapi.json), for the
// web UI's generated client: starts the built `runner server` on a free loopback port with a
// throwaway data directory, fetches GET /api/v1/openapi.json with the local credential, stops it.
// Usage: npm run openapi [-- <output file>]   (after npm run build)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const root = resolve(import.meta.dirname, '..');
const output = resolve(process.argv[2] ?? join(root, 'ui/src/lib/api/openapi.json'));
const dataDir = mkdtempSync(join(tmpdir(), 'runner-openapi-'));
const child = spawn(
  process.execPath,
  [join(root, 'kernel/bin/runner.js'), 'server', '--http-port', '0', '--port', '0', '--bind-address', '127.0.0.1'],
  { env: { ...process.env, RUNNER_DATA_DIR: dataDir, NO_COLOR: '1' }, stdio: ['ignore', 'ignore', 'inherit'] },
);

try {
  const masterFile = join(dataDir, 'master.json');
  const deadline = Date.now() + 20_000;
  while (!existsSync(masterFile)) {
    if (child.exitCode !== null) throw new Error(`runner server exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('runner server did not start within 20 s');
    await sleep(50);
  }
  const { http } = JSON.parse(readFileSync(masterFile, 'utf8'));
  const tokenFile = join(dataDir, 'auth', 'local.token');
  const headers = existsSync(tokenFile) ? { authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` } : {};
  const response = await fetch(`http://${http}/api/v1/openapi.json`, { headers });
  if (!response.ok) throw new Error(`GET /api/v1/openapi.json answered ${response.status}`);
  const document = await response.json();
  mkdirSync(dirname(output), { recursive: true });
  writeFileSync(output, `${JSON.stringify(document, null, 2)}\n`);
  console.log(`wrote ${output} (${Object.keys(document.paths).length} paths)`);
} finally {
  child.kill('SIGTERM');
  await new Promise((done) => (child.exitCode !== null ? done() : child.once('exit', done)));
  rmSync(dataDir, { recursive: true, force: true });
}
