import {
  besideLocalMaster,
  HttpRouterRef,
  InvalidInputError,
  type CommandContext,
  type CommandOption,
  type CommandSpec,
} from '@runner/plugin-sdk';
import { connectHost, formatHostPort } from './address.js';

function portOption(flags: string, description: string): CommandOption {
  return { flags, description, parse: (value) => parsePort(value, flags.split(' ')[0]) };
}

export function parsePort(value: string, flag: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || port > 65535) {
    throw new InvalidInputError(`${flag}: "${value}" is not a port number (0-65535)`, {
      field: flag.replace(/^--/, ''),
    });
  }
  return port;
}

/** Only flags the user gave become overrides, so config.yaml and RUNNER_* still apply to the rest. */
function overridesFrom(options: Record<string, unknown>, keys: Record<string, string>): Record<string, unknown> {
  const overrides: Record<string, unknown> = {};
  for (const [option, key] of Object.entries(keys)) {
    if (options[option] !== undefined) overrides[key] = options[option];
  }
  return overrides;
}

/**
 * `--tls-cert`/`--tls-key`, declared once for both master commands: they set http.tls_*, and the
 * agent transport's gRPC port uses the same pair unless grpc.tls_* says otherwise.
 */
const TLS_OPTIONS: readonly CommandOption[] = [
  {
    flags: '--tls-cert <file>',
    description: 'PEM certificate: HTTPS for the REST API, WebSocket and UI, and TLS for the agents gRPC port',
    configKey: 'http.tls_cert',
  },
  { flags: '--tls-key <file>', description: 'PEM private key of --tls-cert', configKey: 'http.tls_key' },
];

async function runMaster(ctx: CommandContext, overrides: Record<string, unknown>, what: string): Promise<number> {
  const kernel = await ctx.boot('master', overrides);
  const address = kernel.get(HttpRouterRef).address();
  if (address) {
    const bound = formatHostPort(address.host, address.port);
    const local = formatHostPort(connectHost(address.host), address.port);
    const scheme = address.tls === true ? 'https' : 'http';
    ctx.stdout.write(
      `runner master (pid ${process.pid}): ${what} listening on ${bound} (${scheme}://${local}/api/v1); Ctrl-C stops it\n`,
    );
  }
  await kernel.stopOnSignal();
  return 0;
}

export const serverCommand: CommandSpec = {
  name: 'server',
  description:
    'start the master: REST API and WebSocket over HTTP (default port 8080), gRPC for agents (default port 50053)',
  options: [
    portOption('--http-port <n>', 'HTTP port of the REST API (default 8080, config http.port)'),
    {
      flags: '--bind-address <addr>',
      description:
        'address the HTTP server binds, and gRPC unless --grpc-bind-address (default 127.0.0.1, config http.bind_address)',
    },
    {
      flags: '--insecure',
      description: 'allow a non-loopback --bind-address with authentication off (warned about)',
    },
    ...TLS_OPTIONS,
  ],
  run: ({ options }, ctx) =>
    runMaster(
      ctx,
      overridesFrom(options, {
        httpPort: 'http.port',
        bindAddress: 'http.bind_address',
        insecure: 'http.insecure',
      }),
      'REST API',
    ),
};

/**
 * `runner ui` is the master profile under the name operators know for the web interface (served
 * at / by the ui plugin, with the REST API and WebSocket). Authentication flags (`--auth`,
 * `--username`, `--password-file`) come from the auth plugin.
 */
export const uiCommand: CommandSpec = {
  name: 'ui',
  description: 'start the master and serve the web interface at / (default http://127.0.0.1:8080/) with the REST API',
  options: [
    portOption('--port <n>', 'HTTP port of the web interface and REST API (default 8080, config http.port)'),
    {
      flags: '--bind-address <addr>',
      description:
        'address the HTTP server binds, and gRPC unless --grpc-bind-address (default 127.0.0.1, config http.bind_address)',
    },
    {
      flags: '--insecure',
      description: 'allow a non-loopback --bind-address with authentication off (warned about)',
    },
    ...TLS_OPTIONS,
  ],
  run: async ({ options }, ctx) => {
    // One master per data directory: if it runs, the web interface is already served.
    const running = await besideLocalMaster(ctx.config.dataDir, 'open that address in a browser');
    if (running) throw running;
    return runMaster(
      ctx,
      overridesFrom(options, { port: 'http.port', bindAddress: 'http.bind_address', insecure: 'http.insecure' }),
      'web interface and REST API',
    );
  },
};
