import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startChromiumBroker } from './support/chromium-broker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where a test file asks for the run's one chromium (see test/support/chromium-broker.ts). */
    chromiumBroker: string;
  }
}

/**
 * End-to-end tests start real `runner` processes, which run the built JavaScript: build once
 * before any test file runs (esbuild, well under a second). The run's browser tests share one
 * chromium, started on the first file's request (a run of unit tests starts none); a project
 * whose files ask for none starts none.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Once a run: each project (vitest.config.ts) runs this set-up, in the same process.
  const run = globalThis as { runnerTestsBuilt?: boolean };
  if (!run.runnerTestsBuilt) {
    execFileSync(process.execPath, [resolve(import.meta.dirname, '../build.mjs')], { stdio: 'pipe' });
    run.runnerTestsBuilt = true;
  }
  const broker = await startChromiumBroker();
  project.provide('chromiumBroker', broker.url);
  return () => broker.close();
}
