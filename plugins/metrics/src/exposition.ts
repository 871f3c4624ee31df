import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpRouter, Logger } from '@runner/plugin-sdk';
import { METRICS_PATH, METRICS_ROUTE } from './api.js';
import type { MetricsRegistry } from './registry.js';

/** Writes the registry's exposition as the answer (HEAD: its headers only). */
async function answer(registry: MetricsRegistry, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { text, contentType } = await registry.exposition();
  // Encoded once: its length and the bytes sent (a thousand agents make some 175 KB).
  const body = Buffer.from(text, 'utf8');
  res.writeHead(200, {
    'content-type': contentType,
    'content-length': body.length,
    'cache-control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * `GET /metrics` on the master's HTTP port, behind the router's guards with its own permission
 * (`metrics:view`, held by every role, and by an API token made with it). The path is the
 * scrapers' by convention; the web UI has no page there, and plain routes win over the UI's
 * files (plugins/http), so a browser opening it reads the same text.
 */
export function serveOnHttpPort(router: HttpRouter, registry: MetricsRegistry): void {
  router.plain({ ...METRICS_ROUTE, handler: (req, res) => answer(registry, req, res) });
}

/**
 * A listener of its own (`metrics.port` on a master, `agent.metrics_port` on an agent) serving
 * only `GET /metrics`, without authentication: it binds loopback unless `metrics.bind_address`
 * says otherwise, for a scraper on the same host or behind a network the operator trusts.
 */
export async function listenSeparately(
  registry: MetricsRegistry,
  address: { host: string; port: number },
  logger: Logger,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== METRICS_PATH) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`not found: only ${METRICS_PATH}\n`);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('GET only\n');
      return;
    }
    answer(registry, req, res).catch((error: Error) => {
      logger.error(`metrics exposition failed: ${error.message}`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('metrics exposition failed\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  logger.info(`metrics for scrapers at http://${bound.address}:${bound.port}${METRICS_PATH}`);
  return server;
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
