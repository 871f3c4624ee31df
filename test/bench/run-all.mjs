// Runs every benchmark of test/bench one after another (each prints its own figures).
// Run: npm run build && npm run bench [-- name ...]   e.g. npm run bench -- store cli-startup
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = import.meta.dirname;
const only = process.argv.slice(2);
const scripts = readdirSync(dir)
  .filter((f) => f.endsWith('.mjs') && f !== 'run-all.mjs')
  .filter((f) => only.length === 0 || only.some((name) => f.startsWith(name)))
  .sort();
let failed = 0;
for (const script of scripts) {
  console.log(`\n=== ${script}`);
  const result = spawnSync(process.execPath, [join(dir, script)], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
