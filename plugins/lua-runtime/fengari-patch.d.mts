import type { Plugin } from 'esbuild';

export const fengariConcatLimit: Plugin;
