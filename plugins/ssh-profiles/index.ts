export { executorPlugin, plugin } from './src/plugin.js';
export { sshModule } from './src/spec.js';
