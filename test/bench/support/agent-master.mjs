// The master side of the agent benchmarks: an AgentMaster of the build, in the bench's own process,
// listening on an ephemeral loopback port with one join token and a logger that prints only errors.
// Long heartbeat and persist intervals keep their timers out of what the benchmarks time.
import { resolve } from 'node:path';
import { AgentMaster } from '../../../plugins/agent-transport/dist/src/master.js';
import { JoinTokens } from '../../../plugins/agent-transport/dist/src/token.js';

/** The repository's root, for paths of the bin and the agent simulator. */
export const root = resolve(import.meta.dirname, '../../..');
/** The join token the started master accepts. */
export const token = 'rjt_bench';

const quiet = { debug() {}, info() {}, warn() {}, error: (m) => console.error(m), child: () => quiet };

/** Starts the master; resolves to it and its port. */
export async function startAgentMaster() {
  const master = new AgentMaster({
    config: {
      port: 0,
      bindAddress: '127.0.0.1',
      heartbeatIntervalMs: 30_000,
      heartbeatTimeoutMs: 90_000,
      warningThreshold: 80,
      registerTimeoutMs: 10_000,
      callTimeoutMs: 30_000,
      persistIntervalMs: 30_000,
      maxMessageBytes: 16 << 20,
      logTail: 100,
    },
    logger: quiet,
    tokens: new JoinTokens(token, '/nonexistent'),
    version: 'bench',
  });
  const { port } = await master.listen();
  return { master, port };
}
