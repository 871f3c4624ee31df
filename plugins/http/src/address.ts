/** `host:port`, with IPv6 hosts in brackets so the result parses as a URL authority. */
export function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The host a local client dials: a wildcard bind address is not connectable everywhere. */
export function connectHost(boundHost: string): string {
  if (boundHost === '0.0.0.0') return '127.0.0.1';
  if (boundHost === '::') return '::1';
  return boundHost;
}
