import { isDeepStrictEqual } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  InvalidInputError,
  luaOptionalBoolean,
  luaOptionalString,
  luaString,
  readLuaOptions,
  runTool,
  toLuaValue,
  toolFailure,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
  type ToolResult,
} from '@runner/plugin-sdk';
import { helmModule } from './helm-spec.js';

const CLUSTER = ['namespace', 'kubeconfig', 'kube_context'] as const;

/** A release as `helm upgrade -o json` and `helm status -o json` describe it, the parts compared. */
interface Release {
  name: string;
  version: number;
  info?: { status?: string };
  chart?: { metadata?: { name?: string; version?: string } };
  config?: Record<string, unknown> | null;
  manifest?: string;
}

/** Whether a release already is what an upgrade would make it: deployed, same chart, values and manifest. */
export function releaseMatches(current: Release | null, desired: Release): boolean {
  if (current === null || current.info?.status !== 'deployed') return false;
  return (
    current.chart?.metadata?.version === desired.chart?.metadata?.version &&
    current.chart?.metadata?.name === desired.chart?.metadata?.name &&
    isDeepStrictEqual(current.config ?? {}, desired.config ?? {}) &&
    (current.manifest ?? '').trim() === (desired.manifest ?? '').trim()
  );
}

export function createHelmModule(
  options: { bin?: string } = {},
): LuaModuleImplementation<keyof typeof helmModule.functions> {
  const bin = options.bin ?? 'helm';

  const clusterArgs = (fn: string, o: Record<string, LuaValue>): string[] => {
    const args: string[] = [];
    const namespace = luaOptionalString(fn, 'option namespace', o.namespace);
    if (namespace) args.push('--namespace', namespace);
    const kubeconfig = luaOptionalString(fn, 'option kubeconfig', o.kubeconfig);
    if (kubeconfig) args.push('--kubeconfig', kubeconfig);
    const context = luaOptionalString(fn, 'option kube_context', o.kube_context);
    if (context) args.push('--kube-context', context);
    return args;
  };
  const helm = (call: LuaCallContext, args: string[], stdin?: string): Promise<ToolResult> =>
    runTool(call, { file: bin, args, stdin });
  const must = async (call: LuaCallContext, what: string, args: string[], stdin?: string) => {
    const result = await helm(call, args, stdin);
    if (result.code !== 0) throw toolFailure('helm', what, result);
    return result;
  };
  /** The release as `helm status` shows it (with its manifest), or null when there is none. */
  const status = async (call: LuaCallContext, release: string, cluster: string[]): Promise<Release | null> => {
    const result = await helm(call, ['status', release, ...cluster, '--show-resources=false', '-o', 'json']);
    if (result.code !== 0) {
      if (/release: not found/i.test(result.stderr)) return null;
      throw toolFailure('helm', `status ${release}`, result);
    }
    return JSON.parse(result.stdout) as Release;
  };

  return {
    install: async (call, releaseArg, chartArg, opts) => {
      const fn = 'helm.install';
      const release = luaString(fn, 'argument 1 (release)', releaseArg);
      const chart = luaString(fn, 'argument 2 (chart)', chartArg);
      const o = readLuaOptions(fn, 3, opts, [
        ...CLUSTER,
        'values',
        'version',
        'repo',
        'create_namespace',
        'wait',
        'timeout',
        'atomic',
      ]);
      const cluster = clusterArgs(fn, o);
      const scratch = mkdtempSync(join(tmpdir(), 'runner-helm-'));
      try {
        const args = ['upgrade', '--install', release, chart, ...cluster, '-o', 'json'];
        if (o.values !== undefined && o.values !== null) {
          // JSON is YAML: values (secrets among them) go in a private file, not on the command line.
          const file = join(scratch, 'values.json');
          writeFileSync(file, JSON.stringify(o.values), { mode: 0o600 });
          args.push('--values', file);
        }
        const version = luaOptionalString(fn, 'option version', o.version);
        if (version) args.push('--version', version);
        const repo = luaOptionalString(fn, 'option repo', o.repo);
        if (repo) args.push('--repo', repo);
        if (luaOptionalBoolean(fn, 'option create_namespace', o.create_namespace)) args.push('--create-namespace');
        if (luaOptionalBoolean(fn, 'option wait', o.wait)) args.push('--wait');
        if (luaOptionalBoolean(fn, 'option atomic', o.atomic)) args.push('--atomic');
        const timeout = luaOptionalString(fn, 'option timeout', o.timeout);
        if (timeout) args.push('--timeout', timeout);

        const current = await status(call, release, cluster);
        // What the upgrade would make, rendered by helm itself without touching the cluster.
        const desired = JSON.parse((await must(call, 'upgrade --dry-run', [...args, '--dry-run'])).stdout) as Release;
        if (releaseMatches(current, desired)) return { changed: false, revision: current!.version, status: 'deployed' };
        if (call.dryRun) {
          return {
            changed: true,
            dry_run: true,
            action: current ? 'upgrade' : 'install',
            note: `dry-run: would ${current ? 'upgrade' : 'install'} ${release} from ${chart}`,
          };
        }
        const done = JSON.parse((await must(call, `upgrade --install ${release}`, args)).stdout) as Release;
        return {
          changed: true,
          action: current ? 'upgrade' : 'install',
          revision: done.version,
          status: done.info?.status ?? null,
        };
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    },
    uninstall: async (call, releaseArg, opts) => {
      const fn = 'helm.uninstall';
      const release = luaString(fn, 'argument 1 (release)', releaseArg);
      const o = readLuaOptions(fn, 2, opts, [...CLUSTER, 'wait']);
      const cluster = clusterArgs(fn, o);
      if ((await status(call, release, cluster)) === null) return { changed: false };
      if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would uninstall ${release}` };
      await must(call, `uninstall ${release}`, [
        'uninstall',
        release,
        ...cluster,
        ...(luaOptionalBoolean(fn, 'option wait', o.wait) ? ['--wait'] : []),
      ]);
      return { changed: true };
    },
    status: async (call, releaseArg, opts) => {
      const fn = 'helm.status';
      const release = luaString(fn, 'argument 1 (release)', releaseArg);
      const current = await status(call, release, clusterArgs(fn, readLuaOptions(fn, 2, opts, CLUSTER)));
      if (current === null) return null;
      return toLuaValue({
        name: current.name,
        revision: current.version,
        status: current.info?.status,
        chart: current.chart?.metadata,
        values: current.config ?? {},
      });
    },
    list: async (call, opts) => {
      const fn = 'helm.list';
      const o = readLuaOptions(fn, 1, opts, [...CLUSTER, 'all_namespaces']);
      const args = ['list', ...clusterArgs(fn, o), '-o', 'json'];
      if (luaOptionalBoolean(fn, 'option all_namespaces', o.all_namespaces)) args.push('--all-namespaces');
      return toLuaValue(JSON.parse((await must(call, 'list', args)).stdout));
    },
    repo_add: async (call, nameArg, urlArg, opts) => {
      const fn = 'helm.repo_add';
      const name = luaString(fn, 'argument 1 (name)', nameArg);
      const url = luaString(fn, 'argument 2 (url)', urlArg);
      const o = readLuaOptions(fn, 3, opts, ['username', 'password']);
      const listed = await helm(call, ['repo', 'list', '-o', 'json']);
      // With no repository configured helm exits 1 ("no repositories to show").
      const repos = listed.code === 0 ? (JSON.parse(listed.stdout) as { name: string; url: string }[]) : [];
      const existing = repos.find((r) => r.name === name);
      if (existing?.url === url) return { changed: false };
      if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would add repository ${name} (${url})` };
      const args = ['repo', 'add', name, url, '--force-update'];
      const username = luaOptionalString(fn, 'option username', o.username);
      const password = luaOptionalString(fn, 'option password', o.password);
      if (password && !username) throw new InvalidInputError(`${fn}: option password needs option username`);
      if (username) args.push('--username', username);
      // The password on stdin, never on the command line (where ps shows it).
      if (password) args.push('--password-stdin');
      await must(call, `repo add ${name}`, args, password);
      return { changed: true };
    },
  };
}
