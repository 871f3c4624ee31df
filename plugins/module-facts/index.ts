export { plugin } from './src/plugin.js';
export { factsModule } from './src/spec.js';
