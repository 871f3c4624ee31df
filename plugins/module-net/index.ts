export { plugin } from './src/plugin.js';
export { netModule } from './src/spec.js';
