import { AgentRegistryRef, HttpRouterRef, type AgentRegistry, type Plugin } from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as httpPlugin } from '@runner/plugin-http';
import { plugin } from './plugin.js';

export interface TestMaster {
  kernel: TestKernel;
  /** `http://127.0.0.1:<port>` */
  base: string;
  port: number;
  dataDir: string;
}

/**
 * For tests: a master of the real HTTP plugin and this plugin on an ephemeral loopback port, over
 * the given registry (none: the routes answer 503). It writes `<dataDir>/master.json` as a real
 * master does, so the CLI finds it.
 */
export async function startTestMaster(
  registry: AgentRegistry | undefined,
  config: Record<string, unknown> = {},
  dataDir?: string,
  extra: readonly Plugin[] = [],
): Promise<TestMaster> {
  const kernel = await createTestKernel({
    plugins: [httpPlugin, ...extra, plugin],
    services: registry ? [[AgentRegistryRef, registry]] : [],
    profile: 'master',
    dataDir,
    config: { 'http.port': 0, 'http.bind_address': '127.0.0.1', ...config },
  });
  await kernel.ready();
  const address = kernel.get(HttpRouterRef).address();
  if (!address) throw new Error('the router has no address after ready');
  return { kernel, base: `http://127.0.0.1:${address.port}`, port: address.port, dataDir: kernel.config.dataDir };
}
