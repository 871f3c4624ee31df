import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * End-to-end tests start real `runner` processes, which run the built JavaScript: build once
 * before any test file runs (esbuild, well under a second).
 */
export default function setup(): void {
  execFileSync(process.execPath, [resolve(import.meta.dirname, '../build.mjs')], { stdio: 'pipe' });
}
