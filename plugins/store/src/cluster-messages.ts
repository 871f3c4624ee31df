import { randomBytes } from 'node:crypto';
import { RunnerError, type ClusterListener, type Logger } from '@runner/plugin-sdk';

/** What one NOTIFY carries: the messages one master published in one turn of the event loop. */
interface Envelope {
  from: string;
  messages: { topic: string; message: unknown; to?: string }[];
}

interface Reply {
  id: string;
  value?: unknown;
  error?: { code: string; message: string; status: number };
}

type Handler = (payload: unknown, from: string) => unknown;

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
const FAILURE_LOG_MS = 10_000;

/**
 * Topics, targeted messages and requests between masters over one channel (`send`, a NOTIFY).
 * Messages are gathered per turn of the event loop and sent as one envelope, in order.
 */
export class ClusterMessages {
  private readonly listeners = new Map<string, Set<ClusterListener>>();
  private readonly handlers = new Map<string, Handler>();
  private readonly waiting = new Map<
    string,
    { resolve(v: unknown): void; reject(e: Error): void; timer: NodeJS.Timeout }
  >();
  private batch: Envelope['messages'] = [];
  private lostMessages = 0;
  private sending = false;
  private lastFailureLog = 0;
  private scheduled = false;

  constructor(
    private readonly masterId: string,
    private readonly send: (text: string) => Promise<void>,
    private readonly logger: Logger,
  ) {
    this.subscribe<{ id: string; kind: string; payload: unknown }>(
      'cluster.request',
      (request, from) => void this.answer(request, from),
    );
    this.subscribe<Reply>('cluster.reply', (reply) => this.settle(reply));
  }

  publish(topic: string, message: unknown, to?: string): void {
    this.batch.push(to === undefined ? { topic, message } : { topic, message, to });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  subscribe<T>(topic: string, listener: ClusterListener<T>): () => void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(listener as ClusterListener);
    return () => void set.delete(listener as ClusterListener);
  }

  handle(kind: string, handler: Handler): () => void {
    if (this.handlers.has(kind)) throw new Error(`cluster requests of kind ${kind} already have a handler`);
    this.handlers.set(kind, handler);
    return () => void this.handlers.delete(kind);
  }

  /** Asks `to`; `describe` names it in the 503 when it does not answer. */
  request<R>(to: string, kind: string, payload: unknown, describe: string, timeoutMs?: number): Promise<R> {
    if (to === this.masterId) return this.local(kind, payload, this.masterId) as Promise<R>;
    const id = randomBytes(8).toString('hex');
    const ceiling = timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(unavailable(describe, `did not answer within ${ceiling / 1000} s`));
      }, ceiling);
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.publish('cluster.request', { id, kind, payload }, to);
    });
  }

  /** A NOTIFY's text: the envelope of another master (this master's own are skipped). */
  received(text: string): void {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(text) as Envelope;
    } catch {
      return this.logger.warn('a cluster message is not JSON; dropped');
    }
    if (envelope.from === this.masterId) return;
    for (const { topic, message, to } of envelope.messages) {
      if (to !== undefined && to !== this.masterId) continue;
      for (const listener of this.listeners.get(topic) ?? []) {
        try {
          listener(message, envelope.from);
        } catch (error) {
          this.logger.warn(`a listener of cluster topic ${topic} failed: ${(error as Error).message}`);
        }
      }
    }
  }

  /** Rejects every request still waiting (the store is closing). */
  close(): void {
    for (const [id, waiting] of this.waiting) {
      clearTimeout(waiting.timer);
      waiting.reject(unavailable('the cluster', 'is closing'));
      this.waiting.delete(id);
    }
  }

  /**
   * Sends what was gathered as one envelope. While a send is in flight nothing else goes: what
   * comes meanwhile goes together once it is done (one NOTIFY per round trip, however fast
   * messages come, and never two racing each other).
   */
  private flush(): void {
    this.scheduled = false;
    if (this.sending || this.batch.length === 0) return;
    const messages = this.batch;
    this.batch = [];
    const envelope: Envelope = { from: this.masterId, messages };
    this.sending = true;
    this.send(JSON.stringify(envelope))
      .catch((error: Error) => {
        // Once per FAILURE_LOG_MS: with the database away every batch fails alike.
        this.lostMessages += messages.length;
        if (Date.now() - this.lastFailureLog < FAILURE_LOG_MS) return;
        this.lastFailureLog = Date.now();
        this.logger.warn(
          `sending messages to the other masters failed (${this.lostMessages} lost so far): ${error.message}`,
        );
      })
      .finally(() => {
        this.sending = false;
        this.flush();
      });
  }

  private async local(kind: string, payload: unknown, from: string): Promise<unknown> {
    const handler = this.handlers.get(kind);
    if (!handler)
      throw new RunnerError('not_found', `no handler for cluster requests of kind ${kind}`, { status: 404 });
    return handler(payload, from);
  }

  private async answer(request: { id: string; kind: string; payload: unknown }, from: string): Promise<void> {
    let reply: Reply;
    try {
      reply = { id: request.id, value: (await this.local(request.kind, request.payload, from)) ?? null };
    } catch (error) {
      const e = error instanceof RunnerError ? error : new RunnerError('internal_error', (error as Error).message);
      reply = { id: request.id, error: { code: e.code, message: e.message, status: e.status } };
    }
    this.publish('cluster.reply', reply, from);
  }

  private settle(reply: Reply): void {
    const waiting = this.waiting.get(reply.id);
    if (!waiting) return;
    this.waiting.delete(reply.id);
    clearTimeout(waiting.timer);
    if (reply.error)
      waiting.reject(new RunnerError(reply.error.code, reply.error.message, { status: reply.error.status }));
    else waiting.resolve(reply.value);
  }
}

/** 503 `master_unavailable`, naming the master that holds what was asked for. */
export function unavailable(describe: string, why: string): RunnerError {
  return new RunnerError(
    'master_unavailable',
    `${describe} ${why}; try again once it is back or its work is taken over`,
    {
      status: 503,
    },
  );
}
