import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['runner-source'] },
  ssr: { resolve: { conditions: ['runner-source'] } },
  test: {
    include: [
      'kernel/**/*.test.ts',
      'plugin-sdk/**/*.test.ts',
      'plugins/*/**/*.test.ts',
      'desktop/**/*.test.ts',
      'ui/src/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', '**/dist/**'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: end-to-end tests start real processes, so more workers only add contention.
    maxWorkers: 2,
  },
});
