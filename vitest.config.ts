import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * Long files first, so that both workers stay busy to the end instead of one running the browser
 * suite alone while the other has finished. A clean clone has no record of durations (vitest's
 * cache under node_modules/.vite), so the kind of test decides first: browser suites (a master,
 * agents and chromium each, minutes), then the other end-to-end files (real masters and agents),
 * then unit tests; within a kind, the recorded duration when there is one, else the larger file.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const key = (spec: TestSpecification) => `${spec.project.name}:${relative(root, spec.moduleId)}`;
    const kind = (spec: TestSpecification) => {
      const path = relative(root, spec.moduleId);
      if (path.startsWith('test/e2e/ui/')) return 0;
      if (path.startsWith('test/e2e/')) return 1;
      return 2;
    };
    const weight = (spec: TestSpecification) =>
      this.ctx.cache.getFileTestResults(key(spec))?.duration ?? this.ctx.cache.getFileStats(key(spec))?.size ?? 0;
    const recorded = (spec: TestSpecification) => this.ctx.cache.getFileTestResults(key(spec)) !== undefined;
    return [...files].sort((a, b) => {
      const byKind = kind(a) - kind(b);
      if (byKind !== 0) return byKind;
      // Durations and sizes are not comparable: a file with a recorded duration goes first.
      if (recorded(a) !== recorded(b)) return recorded(a) ? -1 : 1;
      return weight(b) - weight(a);
    });
  }
}

const ALL = [
  'kernel/**/*.test.ts',
  'plugin-sdk/**/*.test.ts',
  'plugins/*/**/*.test.ts',
  'desktop/**/*.test.ts',
  'ui/src/**/*.test.ts',
  'test/**/*.test.ts',
];
/** Files that need a process of their own (the heap they measure is the process's). */
const ISOLATED = ['plugins/lua-runtime/src/gc-survival.test.ts'];
const NEVER = ['**/node_modules/**', '**/dist/**'];

export default defineConfig({
  resolve: { conditions: ['runner-source'] },
  ssr: { resolve: { conditions: ['runner-source'] } },
  test: {
    globalSetup: ['test/global-setup.ts'],
    // Each file's temporary files in a directory of its own, removed after the file.
    setupFiles: ['test/temp-dir.ts'],
    // Ceilings, far above what a test needs at rest: a busy machine stretches real processes'
    // start-ups several times over (a delegated-run test took 27 s of its 30 with four workers).
    testTimeout: 60_000,
    // A file's set-up starts a master, agents, sometimes chromium, one after another.
    hookTimeout: 120_000,
    // Two cores: end-to-end tests start real processes, so more workers only add contention
    // (three workers: 453 s against 480 s, each test slower; the CPU is what runs out).
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        // A worker runs these files one after another in one module graph instead of importing
        // it afresh for each of 259 files: the whole run 419 s instead of 480 s, 60 s of imports
        // alone. What a file changes of the process (the environment, the working directory, a
        // global) it puts back in its afterAll, as it would for the next test in the same file.
        test: { name: 'shared', isolate: false, include: ALL, exclude: [...ISOLATED, ...NEVER] },
      },
      // Files that measure their own process: another file's leftovers (a timer, a stream of a
      // process it started) would be counted with what they measure.
      { extends: true, test: { name: 'isolated', isolate: true, include: ISOLATED, exclude: NEVER } },
    ],
  },
});
