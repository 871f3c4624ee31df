import type { RunnerEvents, WebSocketMessages } from '@runner/plugin-sdk';

/** Every message type of /api/v1/ws: the typed broadcasts and the bus events (service.md section 6). */
export type Messages = WebSocketMessages & RunnerEvents;
export type MessageType = keyof Messages & string;

export interface Message<K extends MessageType = MessageType> {
  type: K;
  timestamp: number;
  timestamp_ms?: number;
  id?: string;
  data: Messages[K];
}

type Listener<K extends MessageType> = (message: Message<K>) => void;

/** Backoff between reconnects: 0.5 s doubling to 10 s, so a restarted master is found quickly. */
const RETRY_MS = [500, 1000, 2000, 4000, 8000, 10000];

/**
 * The tab's one WebSocket to the master, reconnecting with backoff when it drops. Pages subscribe
 * to message types with `on()`; the connection state is a rune the layout shows.
 */
class LiveConnection {
  state = $state<'connecting' | 'open' | 'closed'>('closed');
  /** When the connection last dropped, for the banner. */
  lostAt = $state<number | null>(null);
  private socket: WebSocket | undefined;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = true;
  private readonly listeners = new Map<string, Set<Listener<MessageType>>>();
  private readonly anyListeners = new Set<Listener<MessageType>>();

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.open();
  }

  /** Closes for good (logout): no reconnect. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.socket?.close(1000, 'logged out');
    this.socket = undefined;
    this.state = 'closed';
  }

  on<K extends MessageType>(type: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(listener as Listener<MessageType>);
    return () => set.delete(listener as Listener<MessageType>);
  }

  /** Every message, for the activity feed. */
  onAny(listener: Listener<MessageType>): () => void {
    this.anyListeners.add(listener);
    return () => this.anyListeners.delete(listener);
  }

  private open(): void {
    const url = new URL('/api/v1/ws', location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    this.state = 'connecting';
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.onopen = () => {
      this.attempt = 0;
      this.state = 'open';
      this.lostAt = null;
    };
    socket.onmessage = (event) => this.dispatch(event.data);
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.state = 'closed';
      if (this.stopped) return;
      this.lostAt ??= Date.now();
      const delay = RETRY_MS[Math.min(this.attempt++, RETRY_MS.length - 1)];
      this.timer = setTimeout(() => this.open(), delay);
    };
  }

  private dispatch(raw: unknown): void {
    if (typeof raw !== 'string') return;
    let message: Message;
    try {
      message = JSON.parse(raw) as Message;
    } catch {
      return;
    }
    // The hub may batch several messages into one frame as an array.
    for (const m of Array.isArray(message) ? (message as Message[]) : [message]) {
      if (!m || typeof m.type !== 'string') continue;
      for (const listener of this.listeners.get(m.type) ?? []) listener(m);
      for (const listener of this.anyListeners) listener(m);
    }
  }
}

export const live = new LiveConnection();
