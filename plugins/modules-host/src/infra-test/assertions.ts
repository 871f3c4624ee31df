import { readFile, stat } from 'node:fs/promises';
import { isLuaTable, luaType, parseDurationArgument, type LuaCallContext, type LuaValue } from '@runner/plugin-sdk';
import { runCommand } from '../host/command.js';
import { formatMode, parseMode } from '../file/mode.js';
import { queryInstalled } from '../pkg/pkg.js';

type Assertion = Record<string, LuaValue>;
/** What failed, each a sentence; empty when the assertion holds. */
type Outcome = string[];

/** The name of a uid or gid, from getent; the number when it has none. */
async function nameOf(db: 'passwd' | 'group', id: number): Promise<string> {
  const r = await runCommand(['getent', db, String(id)]);
  return r.code === 0 ? r.stdout.split(':')[0] : String(id);
}

async function fileAssertion(a: Assertion): Promise<Outcome> {
  const path = String(a.file);
  const wanted = a.exists ?? true;
  const info = await stat(path).catch(() => null);
  if (!info) return wanted ? [`file ${path}: does not exist`] : [];
  if (wanted === false) return [`file ${path}: exists, expected it not to`];
  const failures: string[] = [];
  if (a.mode !== undefined) {
    const mode = info.mode & 0o7777;
    if (mode !== parseMode(a.mode, `infra_test: file ${path}: mode`))
      failures.push(`file ${path}: mode is ${formatMode(mode)}, expected ${String(a.mode)}`);
  }
  if (a.owner !== undefined) {
    const owner = await nameOf('passwd', info.uid);
    if (owner !== String(a.owner) && String(info.uid) !== String(a.owner))
      failures.push(`file ${path}: owner is ${owner}, expected ${String(a.owner)}`);
  }
  if (a.group !== undefined) {
    const group = await nameOf('group', info.gid);
    if (group !== String(a.group) && String(info.gid) !== String(a.group))
      failures.push(`file ${path}: group is ${group}, expected ${String(a.group)}`);
  }
  if (a.contains !== undefined) {
    const text = info.isFile() ? await readFile(path, 'utf8') : '';
    if (!text.includes(String(a.contains)))
      failures.push(`file ${path}: does not contain ${JSON.stringify(a.contains)}`);
  }
  return failures;
}

/** Ports with a listening TCP socket, read from /proc/net/tcp and tcp6 (state 0A is LISTEN). */
export async function listeningPorts(): Promise<Set<number>> {
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A') ports.add(parseInt(fields[1].split(':').pop()!, 16));
    }
  }
  return ports;
}

async function portAssertion(a: Assertion): Promise<Outcome> {
  const port = Number(a.port);
  const wanted = a.listening ?? true;
  const listening = (await listeningPorts()).has(port);
  if (listening === wanted) return [];
  return [`port ${port}: ${listening ? 'is listening, expected it not to' : 'nothing listens on it'}`];
}

async function serviceAssertion(a: Assertion, signal: AbortSignal): Promise<Outcome> {
  const wanted = a.running ?? true;
  const r = await runCommand(['systemctl', 'is-active', String(a.service)], { signal });
  const state = r.stdout.trim() || r.stderr.trim();
  if (r.code === 127) return [`service ${String(a.service)}: systemctl is not installed`];
  if (/System has not been booted with systemd|Failed to connect to bus/.test(r.stderr))
    return [`service ${String(a.service)}: systemd is not running on this host`];
  const running = r.code === 0;
  if (running === wanted) return [];
  return [`service ${String(a.service)}: is ${state || 'not active'}, expected ${wanted ? 'running' : 'stopped'}`];
}

async function packageAssertion(a: Assertion, signal: AbortSignal): Promise<Outcome> {
  const wanted = a.installed ?? true;
  const version = await queryInstalled(String(a.package), signal);
  const installed = version !== null;
  if (installed === wanted) return [];
  return [
    `package ${String(a.package)}: ${installed ? `is installed (${version}), expected it not to be` : 'is not installed'}`,
  ];
}

async function httpAssertion(a: Assertion, signal: AbortSignal): Promise<Outcome> {
  const url = String(a.http);
  const timeoutMs = a.timeout === undefined ? 10_000 : parseDurationArgument(a.timeout, 'infra_test http timeout');
  try {
    const response = await fetch(url, {
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      redirect: 'manual',
    });
    const body = await response.text();
    const failures: string[] = [];
    const status = a.status ?? 200;
    if (response.status !== status) failures.push(`http ${url}: status ${response.status}, expected ${String(status)}`);
    if (a.body_contains !== undefined && !body.includes(String(a.body_contains)))
      failures.push(`http ${url}: body does not contain ${JSON.stringify(a.body_contains)}`);
    return failures;
  } catch (error) {
    if (signal.aborted) throw error;
    return [
      `http ${url}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`,
    ];
  }
}

async function commandAssertion(a: Assertion, call: LuaCallContext): Promise<Outcome> {
  if (call.dryRun) return [];
  const cmd = String(a.command);
  const r = await runCommand(['/bin/sh', '-c', cmd], { signal: call.signal });
  const failures: string[] = [];
  const code = a.exit_code ?? 0;
  if (r.code !== code)
    failures.push(
      `command ${cmd}: exit code ${r.code ?? 'none (killed)'}, expected ${String(code)}${r.stderr.trim() ? ` (stderr: ${r.stderr.trim().slice(0, 200)})` : ''}`,
    );
  if (a.stdout_contains !== undefined && !r.stdout.includes(String(a.stdout_contains)))
    failures.push(`command ${cmd}: output does not contain ${JSON.stringify(a.stdout_contains)}`);
  return failures;
}

const KINDS = ['file', 'port', 'service', 'package', 'http', 'command'] as const;

/** Checks one assertion; a malformed one raises (a script error, not a failed check). */
export function checkOne(a: LuaValue, index: number, call: LuaCallContext): Promise<Outcome> {
  if (!isLuaTable(a) || Array.isArray(a))
    throw new Error(`infra_test: assertion ${index} must be a table, got ${luaType(a)}`);
  const kinds = KINDS.filter((k) => a[k] !== undefined);
  if (kinds.length !== 1)
    throw new Error(
      `infra_test: assertion ${index} must name exactly one of ${KINDS.join(', ')} (it names ${kinds.join(', ') || 'none'})`,
    );
  switch (kinds[0]) {
    case 'file':
      return fileAssertion(a);
    case 'port':
      return portAssertion(a);
    case 'service':
      return serviceAssertion(a, call.signal);
    case 'package':
      return packageAssertion(a, call.signal);
    case 'http':
      return httpAssertion(a, call.signal);
    case 'command':
      return commandAssertion(a, call);
  }
}

/** Checks all of them, each to the end: how many passed and every failure. */
export async function checkAll(
  call: LuaCallContext,
  list: LuaValue,
): Promise<{ passed: number; total: number; failures: string[] }> {
  if (!Array.isArray(list))
    throw new Error(`infra_test: argument 1 must be a list of assertions, got ${luaType(list)}`);
  const outcomes = await Promise.all(list.map((a, i) => checkOne(a, i + 1, call)));
  const failures = outcomes.flat();
  return { passed: outcomes.filter((o) => o.length === 0).length, total: list.length, failures };
}
