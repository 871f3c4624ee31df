// For tests of plugins that declare metrics: the registry behind MetricsRef with its exposition,
// so a test reads what a scraper would. Source only (vitest), not part of the built package.
export { MetricsRegistry } from './src/registry.js';
