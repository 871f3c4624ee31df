import { randomBytes } from 'node:crypto';
import { RunnerError, type AgentTerminal, type AgentTerminals, type Cluster } from '@runner/plugin-sdk';

/** While a terminal is relayed, how often each end checks that the other's master is alive. */
const ALIVE_CHECK_MS = 5_000;
/** File copies may be 8 MiB (the terminal page's limit) through the store's message table. */
const FILE_TIMEOUT_MS = 120_000;

/** What the relay needs of the cluster's agents (cluster-agents.ts). */
export interface AgentHolders {
  /** The master holding the agent, when it is another one. */
  holder(name: string): string | undefined;
  /** A request to that master, its failures named for the agent. */
  ask<R>(holder: string, kind: string, payload: unknown, agent: string, timeoutMs?: number): Promise<R>;
  /** The error for an agent whose master died or cannot be reached. */
  unreachable(agent: string, holder: string, why: string): RunnerError;
}

/** The requester's side of a relayed terminal: where its output and end go. */
interface Relayed {
  output(data: Buffer): void;
  exit(code: number): void;
  fail(error: Error): void;
}

/**
 * Terminals and file copies on agents connected to another master (issue 22: a terminal opened on
 * any master reaches an agent connected to another). The master holding the agent opens the PTY
 * on its own connection and relays: output and the end come back as messages to the master that
 * asked, keystrokes, sizes and the hang-up go to the holder as messages. Each end watches the
 * other's master: a terminal whose holder died ends with an error, one whose asker died is closed.
 */
export class ClusterTerminals implements AgentTerminals {
  /** Terminals this master opened elsewhere, by relay id. */
  private readonly relayed = new Map<string, Relayed>();
  /** Terminals this master holds for others, by relay id. */
  private readonly serving = new Map<string, AgentTerminal>();

  constructor(
    private readonly cluster: Cluster,
    private readonly local: AgentTerminals,
    private readonly agents: AgentHolders,
  ) {}

  /** Subscribes and answers; returns what undoes it. */
  start(): (() => void)[] {
    const { cluster } = this;
    return [
      cluster.subscribe<{ id: string; data: string }>('terminal.output', ({ id, data }) =>
        this.relayed.get(id)?.output(Buffer.from(data, 'base64')),
      ),
      cluster.subscribe<{ id: string; code?: number; error?: string }>('terminal.exit', ({ id, code, error }) => {
        const relayed = this.relayed.get(id);
        if (error === undefined) relayed?.exit(code ?? -1);
        else relayed?.fail(new RunnerError('agent_unreachable', error, { status: 502 }));
      }),
      cluster.subscribe<{ id: string; data?: string; rows?: number; cols?: number }>('terminal.input', (input) => {
        const terminal = this.serving.get(input.id);
        if (input.data !== undefined) terminal?.write(Buffer.from(input.data, 'base64'));
        if (input.rows !== undefined && input.cols !== undefined) terminal?.resize(input.rows, input.cols);
      }),
      cluster.subscribe<{ id: string }>('terminal.close', ({ id }) => this.serving.get(id)?.close()),
      cluster.handle('terminal.open', (p: OpenRequest, from) => this.serveOpen(p, from)),
      cluster.handle('terminal.put', async (p: { name: string; path: string; data: string; mode?: number }) =>
        this.local.putFile(p.name, p.path, Buffer.from(p.data, 'base64'), p.mode),
      ),
      cluster.handle('terminal.get', async (p: { name: string; path: string; maxBytes: number }) =>
        (await this.local.getFile(p.name, p.path, p.maxBytes)).toString('base64'),
      ),
    ];
  }

  /** Closes what this master holds for others (it is stopping). */
  stop(): void {
    for (const terminal of this.serving.values()) terminal.close();
  }

  async open(
    name: string,
    size: { rows: number; cols: number; term?: string },
    output: (data: Buffer) => void,
  ): Promise<AgentTerminal> {
    const holder = this.agents.holder(name);
    if (holder === undefined) return this.local.open(name, size, output);
    const id = randomBytes(8).toString('hex');
    let relayed!: Relayed;
    const exited = new Promise<number>((exit, fail) => (relayed = { output, exit, fail }));
    this.relayed.set(id, relayed);
    const watch = setInterval(() => {
      this.cluster.isAlive(holder).then(
        (alive) => alive || relayed.fail(this.agents.unreachable(name, holder, 'died')),
        () => undefined,
      );
    }, ALIVE_CHECK_MS);
    void exited
      .catch(() => undefined)
      .finally(() => {
        clearInterval(watch);
        this.relayed.delete(id);
      });
    try {
      await this.agents.ask(holder, 'terminal.open', { id, name, size } satisfies OpenRequest, name);
    } catch (error) {
      relayed.fail(error as Error);
      throw error;
    }
    const send = (topic: string, message: Record<string, unknown>) =>
      this.cluster.publish(topic, { id, ...message }, { to: holder });
    return {
      write: (data) => send('terminal.input', { data: Buffer.from(data).toString('base64') }),
      resize: (rows, cols) => send('terminal.input', { rows, cols }),
      close: () => send('terminal.close', {}),
      exited,
    };
  }

  async putFile(name: string, path: string, data: Buffer, mode?: number): Promise<number> {
    const holder = this.agents.holder(name);
    if (holder === undefined) return this.local.putFile(name, path, data, mode);
    const payload = { name, path, data: data.toString('base64'), mode };
    return this.agents.ask<number>(holder, 'terminal.put', payload, name, FILE_TIMEOUT_MS);
  }

  async getFile(name: string, path: string, maxBytes: number): Promise<Buffer> {
    const holder = this.agents.holder(name);
    if (holder === undefined) return this.local.getFile(name, path, maxBytes);
    const data = await this.agents.ask<string>(holder, 'terminal.get', { name, path, maxBytes }, name, FILE_TIMEOUT_MS);
    return Buffer.from(data, 'base64');
  }

  /** Opens the PTY here for master `from`, relaying its output and end there until it ends. */
  private async serveOpen(p: OpenRequest, from: string): Promise<null> {
    const send = (topic: string, message: Record<string, unknown>) =>
      this.cluster.publish(topic, { id: p.id, ...message }, { to: from });
    const terminal = await this.local.open(p.name, p.size, (data) =>
      send('terminal.output', { data: data.toString('base64') }),
    );
    this.serving.set(p.id, terminal);
    // The asking master died: nobody will hang up, so this end does.
    const watch = setInterval(() => {
      this.cluster.isAlive(from).then(
        (alive) => alive || terminal.close(),
        () => undefined,
      );
    }, ALIVE_CHECK_MS);
    terminal.exited
      .then(
        (code) => send('terminal.exit', { code }),
        (error: Error) => send('terminal.exit', { error: error.message }),
      )
      .finally(() => {
        clearInterval(watch);
        this.serving.delete(p.id);
      });
    return null;
  }
}

interface OpenRequest {
  id: string;
  name: string;
  size: { rows: number; cols: number; term?: string };
}
