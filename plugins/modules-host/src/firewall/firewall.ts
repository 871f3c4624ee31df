import type { LuaCallContext, LuaModuleImplementation, LuaValue } from '@runner/plugin-sdk';
import { change, options, optString } from '../host/args.js';
import { haveProgram, mustRun, runCommand } from '../host/command.js';
import type { firewallModule } from './spec.js';

export interface Rule {
  action: 'allow' | 'deny';
  port: number;
  proto: 'tcp' | 'udp';
  from?: string;
}

/** The comment that names a rule in table inet runner. */
export const ruleName = (r: Rule): string => `runner:${r.action}:${r.proto}:${r.port}:${r.from ?? 'any'}`;

/** The nft commands: the table and chain (idempotent `add`), the rule, and its deletion by handle. */
export function nftSetup(): string[][] {
  return [
    ['nft', 'add', 'table', 'inet', 'runner'],
    ['nft', 'add', 'chain', 'inet', 'runner', 'input', '{ type filter hook input priority 0 ; policy accept ; }'],
  ];
}

export function nftRule(r: Rule): string[] {
  const from = r.from ? [r.from.includes(':') ? 'ip6' : 'ip', 'saddr', r.from] : [];
  return [
    'nft',
    'add',
    'rule',
    'inet',
    'runner',
    'input',
    ...from,
    r.proto,
    'dport',
    String(r.port),
    r.action === 'allow' ? 'accept' : 'drop',
    'comment',
    `"${ruleName(r)}"`,
  ];
}

export function ufwRule(r: Rule, remove = false): string[] {
  return [
    'ufw',
    ...(remove ? ['delete'] : []),
    r.action,
    'proto',
    r.proto,
    'from',
    r.from ?? 'any',
    'to',
    'any',
    'port',
    String(r.port),
  ];
}

function inNetns(argv: string[], netns: string | undefined): string[] {
  return netns ? ['ip', 'netns', 'exec', netns, ...argv] : argv;
}

async function backendOf(named: string | undefined, netns: string | undefined): Promise<'nft' | 'ufw'> {
  if (named === 'nft' || named === 'ufw') return named;
  if (named !== undefined) throw new Error(`firewall: backend must be "nft" or "ufw", got ${named}`);
  if (await haveProgram('ufw')) {
    const status = await runCommand(inNetns(['ufw', 'status'], netns));
    if (/Status: active/.test(status.stdout)) return 'ufw';
  }
  return 'nft';
}

/** The rules of table inet runner by name, with their handles. */
async function nftRules(netns: string | undefined, signal: AbortSignal): Promise<Map<string, string>> {
  const r = await runCommand(inNetns(['nft', '-a', 'list', 'chain', 'inet', 'runner', 'input'], netns), { signal });
  const found = new Map<string, string>();
  if (r.code !== 0) return found; // no table yet
  for (const line of r.stdout.split('\n')) {
    const m = /comment "([^"]+)".*# handle (\d+)/.exec(line);
    if (m) found.set(m[1], m[2]);
  }
  return found;
}

function parseRule(fn: string, portArg: LuaValue, optsArg: LuaValue, action: 'allow' | 'deny' | undefined) {
  if (typeof portArg !== 'number' || !Number.isInteger(portArg) || portArg < 1 || portArg > 65535)
    throw new Error(`firewall.${fn}: argument 1 must be a port number`);
  const o = options(`firewall.${fn}`, optsArg, 2, ['proto', 'from', 'backend', 'netns', 'action'] as const);
  const proto = optString(`firewall.${fn}`, 'proto', o.proto) ?? 'tcp';
  if (proto !== 'tcp' && proto !== 'udp') throw new Error(`firewall.${fn}: proto must be tcp or udp`);
  const from = optString(`firewall.${fn}`, 'from', o.from);
  if (from !== undefined && !/^[0-9a-fA-F:.]+(\/\d+)?$/.test(from))
    throw new Error(`firewall.${fn}: from must be an address or network`);
  const chosen = action ?? ((optString(`firewall.${fn}`, 'action', o.action) ?? 'allow') as 'allow' | 'deny');
  const rule: Rule = { action: chosen, port: portArg, proto, ...(from ? { from } : {}) };
  return {
    rule,
    backend: optString(`firewall.${fn}`, 'backend', o.backend),
    netns: optString(`firewall.${fn}`, 'netns', o.netns),
  };
}

function acting(fn: 'allow' | 'deny' | 'remove') {
  return async (call: LuaCallContext, portArg: LuaValue, optsArg: LuaValue) => {
    const { rule, backend: named, netns } = parseRule(fn, portArg, optsArg, fn === 'remove' ? undefined : fn);
    const backend = await backendOf(named, netns);
    const name = ruleName(rule);
    const run = (argv: string[]) => mustRun(`firewall.${fn}`, inNetns(argv, netns), { signal: call.signal });
    if (backend === 'ufw') {
      const listed = (await run(['ufw', 'show', 'added'])).includes(ufwRule(rule).slice(1).join(' '));
      const todo = fn === 'remove' ? listed : !listed;
      return change(call, todo, `${fn} ${name} (ufw)`, async () => void (await run(ufwRule(rule, fn === 'remove'))), {
        rule: name,
      });
    }
    const handle = (await nftRules(netns, call.signal)).get(name);
    const todo = fn === 'remove' ? handle !== undefined : handle === undefined;
    return change(
      call,
      todo,
      `${fn} ${name} (nftables)`,
      async () => {
        if (fn === 'remove')
          return void (await run(['nft', 'delete', 'rule', 'inet', 'runner', 'input', 'handle', handle!]));
        for (const argv of nftSetup()) await run(argv);
        await run(nftRule(rule));
      },
      { rule: name },
    );
  };
}

export function createFirewallModule(): LuaModuleImplementation<keyof typeof firewallModule.functions> {
  return {
    allow: acting('allow'),
    deny: acting('deny'),
    remove: acting('remove'),
    async rules(call, optsArg) {
      const o = options('firewall.rules', optsArg, 1, ['backend', 'netns'] as const);
      const netns = optString('firewall.rules', 'netns', o.netns);
      if ((await backendOf(optString('firewall.rules', 'backend', o.backend), netns)) === 'ufw')
        return (await mustRun('firewall.rules', inNetns(['ufw', 'show', 'added'], netns)))
          .split('\n')
          .filter((l) => l.startsWith('ufw '));
      return [...(await nftRules(netns, call.signal)).keys()];
    },
  };
}
