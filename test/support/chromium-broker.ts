// One chromium for a whole vitest run. The global set-up (test/global-setup.ts) starts this broker, a
// loopback HTTP server in vitest's main process; a browser test file asks it for the browser's
// WebSocket address (`launch()` in test/e2e/ui/browser.ts) and connects. Chromium starts on the
// first request, so a run without browser tests starts none, and again if it has died.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type BrowserServer, type LaunchOptions } from 'playwright-core';

/** Debian's chromium as every test runs it (the flags of the project's rules). */
export const CHROMIUM_OPTIONS: LaunchOptions = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
  ],
  // A ceiling far above a start-up's second at rest.
  timeout: 60_000,
};

export interface ChromiumBroker {
  /** `http://127.0.0.1:<port>/`: answers the running chromium's WebSocket address as text. */
  url: string;
  close(): Promise<void>;
}

export async function startChromiumBroker(): Promise<ChromiumBroker> {
  let running: Promise<BrowserServer> | undefined;
  const browser = () => {
    if (!running) {
      const starting = chromium.launchServer(CHROMIUM_OPTIONS);
      running = starting;
      starting.then(
        (server) => server.process().once('exit', () => running === starting && (running = undefined)),
        () => (running = undefined),
      );
    }
    return running;
  };
  const http = createServer((_request, response) => {
    browser().then(
      (server) => response.writeHead(200, { 'content-type': 'text/plain' }).end(server.wsEndpoint()),
      (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`chromium: ${error.message}`),
    );
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    async close() {
      await new Promise((resolve) => http.close(resolve));
      const server = await running?.catch(() => undefined);
      await server?.close();
    },
  };
}
