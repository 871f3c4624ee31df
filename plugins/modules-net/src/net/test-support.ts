import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LogFields, Logger, LuaCallContext } from '@runner/plugin-sdk';

export interface LoggedLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields?: LogFields;
}

/** A real call context: what the Lua runtime passes, with a logger that records and can be watched. */
export function callContext(
  options: { dryRun?: boolean; signal?: AbortSignal; onLine?: (line: LoggedLine) => void } = {},
): { call: LuaCallContext; lines: LoggedLine[] } {
  const lines: LoggedLine[] = [];
  const logger: Logger = {
    debug: (message, fields) => record({ level: 'debug', message, fields }),
    info: (message, fields) => record({ level: 'info', message, fields }),
    warn: (message, fields) => record({ level: 'warn', message, fields }),
    error: (message, fields) => record({ level: 'error', message, fields }),
    child: () => logger,
  };
  function record(line: LoggedLine): void {
    lines.push(line);
    options.onLine?.(line);
  }
  return {
    call: { dryRun: options.dryRun ?? false, logger, signal: options.signal ?? new AbortController().signal },
    lines,
  };
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

/** A real HTTP server on 127.0.0.1 and an ephemeral port; counts requests per path. */
export interface TestServer {
  url(path: string): string;
  readonly port: number;
  hits(path: string): number;
  /** Called as each request arrives, before it is handled. */
  onRequest?: (req: IncomingMessage) => void;
  close(): Promise<void>;
}

export async function startServer(routes: Record<string, Handler>): Promise<TestServer> {
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    handle.onRequest?.(req);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const route = routes[path];
      if (route) route(req, res, Buffer.concat(chunks));
      else res.writeHead(404, { 'content-type': 'text/plain' }).end(`no route ${path}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const handle: TestServer = {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    hits: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return handle;
}

/** A port on 127.0.0.1 that nothing listens on (it was bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
