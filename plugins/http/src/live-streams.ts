import type { Principal } from '@runner/plugin-sdk';

interface LiveStream {
  principal: Principal;
  end(reason: string): void;
}

/**
 * The answers that stay open (WebSocket clients, server-sent events) with the principal each was
 * opened by. A credential checked once at the start would outlive its revocation: whoever revokes
 * one (logout, a revoked token, a removed user, a password reset) ends the streams it opened.
 */
export class LiveStreams {
  private readonly open = new Set<LiveStream>();

  /** Keeps a stream until the returned function is called (when it closes). */
  track(principal: Principal, end: (reason: string) => void): () => void {
    const stream = { principal, end };
    this.open.add(stream);
    return () => this.open.delete(stream);
  }

  /** Ends every open stream whose principal matches; answers how many. */
  end(match: (principal: Principal) => boolean, reason: string): number {
    let ended = 0;
    for (const stream of [...this.open]) {
      if (!match(stream.principal)) continue;
      this.open.delete(stream);
      stream.end(reason);
      ended += 1;
    }
    return ended;
  }
}
