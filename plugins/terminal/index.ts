export { plugin } from './src/plugin.js';
