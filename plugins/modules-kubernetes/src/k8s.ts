import type { KubeConfig, KubernetesObject, KubernetesObjectApi } from '@kubernetes/client-node';
import {
  InvalidInputError,
  isLuaTable,
  luaOptionalBoolean,
  luaOptionalNumber,
  luaOptionalString,
  luaString,
  parseDurationArgument,
  readLuaOptions,
  RunnerError,
  sleep,
  toLuaValue,
  TEMPLATE_SYNTAXES,
  type LuaModuleImplementation,
  type LuaValue,
  type TemplateSyntax,
} from '@runner/plugin-sdk';
import { k8sModule } from './k8s-spec.js';

/** Renders a manifest template with a context (the template plugin's engine, when it is loaded). */
export type ManifestRenderer = (template: string, context: Record<string, unknown>, syntax: TemplateSyntax) => string;

/** Where a cluster is: kubeconfig and context as kubectl takes them; the default is kubectl's own. */
export interface ClusterOptions {
  kubeconfig?: string;
  context?: string;
}

/** The kubeconfig a test or a caller gives instead of a file (a fake API server's address). */
export type KubeConfigLoader = (options: ClusterOptions) => Promise<KubeConfig>;

/** What kubectl calls a kind by, to the kind and the apiVersion it is served at. */
const KINDS: Record<string, [kind: string, apiVersion: string]> = {};
for (const [kind, apiVersion, ...aliases] of [
  ['Pod', 'v1', 'po'],
  ['Service', 'v1', 'svc'],
  ['ConfigMap', 'v1', 'cm'],
  ['Secret', 'v1'],
  ['Namespace', 'v1', 'ns'],
  ['Node', 'v1', 'no'],
  ['PersistentVolumeClaim', 'v1', 'pvc'],
  ['PersistentVolume', 'v1', 'pv'],
  ['ServiceAccount', 'v1', 'sa'],
  ['Event', 'v1', 'ev'],
  ['Deployment', 'apps/v1', 'deploy'],
  ['StatefulSet', 'apps/v1', 'sts'],
  ['DaemonSet', 'apps/v1', 'ds'],
  ['ReplicaSet', 'apps/v1', 'rs'],
  ['Job', 'batch/v1'],
  ['CronJob', 'batch/v1', 'cj'],
  ['Ingress', 'networking.k8s.io/v1', 'ing'],
  ['NetworkPolicy', 'networking.k8s.io/v1', 'netpol'],
  ['HorizontalPodAutoscaler', 'autoscaling/v2', 'hpa'],
  ['Role', 'rbac.authorization.k8s.io/v1'],
  ['RoleBinding', 'rbac.authorization.k8s.io/v1'],
  ['ClusterRole', 'rbac.authorization.k8s.io/v1'],
  ['ClusterRoleBinding', 'rbac.authorization.k8s.io/v1'],
]) {
  const lower = kind.toLowerCase();
  for (const name of [lower, `${lower}s`, lower.endsWith('s') ? `${lower}es` : `${lower}s`, ...aliases])
    KINDS[name] = [kind, apiVersion];
}
KINDS.ingresses = KINDS.ingress;
KINDS.networkpolicies = KINDS.networkpolicy;

/** `deploy`, `deployments`, `Deployment` -> Deployment at apps/v1; another kind needs opts.api_version. */
export function resolveKind(fn: string, kind: string, apiVersion: string | undefined): [string, string] {
  const known = KINDS[kind.toLowerCase()];
  if (apiVersion) return [known && known[1] === apiVersion ? known[0] : kind, apiVersion];
  if (!known)
    throw new InvalidInputError(
      `${fn}: unknown kind "${kind}": give opts.api_version (e.g. "example.com/v1") with its kind`,
    );
  return known;
}

/** Manifest text (one or more YAML documents), a table, or a list of tables, as objects. */
export async function manifestObjects(fn: string, manifest: LuaValue): Promise<KubernetesObject[]> {
  let objects: unknown[];
  if (typeof manifest === 'string') {
    const { loadAllYaml } = await import('@kubernetes/client-node');
    objects = loadAllYaml(manifest).filter((doc: unknown) => doc !== null && doc !== undefined);
  } else if (Array.isArray(manifest)) objects = manifest;
  else if (isLuaTable(manifest)) objects = [manifest];
  else throw new InvalidInputError(`${fn}: argument 1 must be manifest text, a table or a list of tables`);
  return objects.map((object, i) => {
    const o = object as KubernetesObject;
    if (!o || typeof o !== 'object' || !o.apiVersion || !o.kind || !o.metadata?.name) {
      throw new InvalidInputError(`${fn}: object ${i + 1} of the manifest needs apiVersion, kind and metadata.name`);
    }
    return o;
  });
}

/** An object as a comparison sees it: without what the server changes on every write. */
function comparable(object: KubernetesObject | null): string {
  if (object === null) return 'null';
  const { metadata, ...rest } = object as KubernetesObject & { status?: unknown };
  const {
    managedFields: _m,
    resourceVersion: _r,
    generation: _g,
    creationTimestamp: _c,
    uid: _u,
    ...meta
  } = metadata ?? {};
  delete (rest as { status?: unknown }).status;
  return JSON.stringify({ ...rest, metadata: meta });
}

function isNotFound(error: unknown): boolean {
  return (error as { code?: number }).code === 404;
}

function apiError(fn: string, what: string, error: unknown): Error {
  const e = error as { code?: number; body?: unknown; message?: string };
  let reason = e.message ?? String(error);
  if (typeof e.body === 'string') {
    try {
      reason = (JSON.parse(e.body) as { message?: string }).message ?? reason;
    } catch {
      reason = e.body || reason;
    }
  } else if (e.body && typeof e.body === 'object' && 'message' in e.body)
    reason = String((e.body as { message: unknown }).message);
  return new RunnerError('failed', `${fn}: ${what}: ${reason}`, { details: e.code ? { status: e.code } : undefined });
}

/** kubectl's rules for a rollout being complete, for Deployment, StatefulSet and DaemonSet. */
export function rolloutDone(object: {
  kind?: string;
  metadata?: { generation?: number };
  spec?: Record<string, any>;
  status?: Record<string, any>;
}): { done: boolean; message: string } {
  const status = object.status ?? {};
  const generation = object.metadata?.generation ?? 0;
  if ((status.observedGeneration ?? 0) < generation)
    return { done: false, message: 'waiting for the rollout to be observed' };
  if (object.kind === 'DaemonSet') {
    const want = status.desiredNumberScheduled ?? 0;
    if ((status.updatedNumberScheduled ?? 0) < want)
      return { done: false, message: `${status.updatedNumberScheduled ?? 0} of ${want} updated pods scheduled` };
    if ((status.numberAvailable ?? 0) < want)
      return { done: false, message: `${status.numberAvailable ?? 0} of ${want} updated pods available` };
    return { done: true, message: 'daemon set rolled out' };
  }
  const want = object.spec?.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  if (updated < want) return { done: false, message: `${updated} of ${want} new replicas updated` };
  if (object.kind === 'StatefulSet') {
    const ready = status.readyReplicas ?? 0;
    return ready < want
      ? { done: false, message: `${ready} of ${want} replicas ready` }
      : { done: true, message: 'stateful set rolled out' };
  }
  if ((status.replicas ?? 0) > updated)
    return { done: false, message: `${(status.replicas ?? 0) - updated} old replicas pending termination` };
  const available = status.availableReplicas ?? 0;
  if (available < updated) return { done: false, message: `${available} of ${updated} updated replicas available` };
  return { done: true, message: 'deployment rolled out' };
}

const CLUSTER = ['kubeconfig', 'kube_context'] as const;

export interface K8sModuleOptions {
  render?: ManifestRenderer;
  /** Defaults to kubectl's rules: opts.kubeconfig, else $KUBECONFIG, ~/.kube/config or the in-cluster account. */
  loadConfig?: KubeConfigLoader;
  /** Between two reads of a rollout. */
  pollMs?: number;
}

export function createK8sModule(
  options: K8sModuleOptions = {},
): LuaModuleImplementation<keyof typeof k8sModule.functions> {
  const loadConfig: KubeConfigLoader =
    options.loadConfig ??
    (async ({ kubeconfig, context }) => {
      const { KubeConfig } = await import('@kubernetes/client-node');
      const kc = new KubeConfig();
      if (kubeconfig) kc.loadFromFile(kubeconfig);
      else kc.loadFromDefault();
      if (context) kc.setCurrentContext(context);
      return kc;
    });
  const pollMs = options.pollMs ?? 1000;

  async function client(
    fn: string,
    o: Record<string, LuaValue>,
  ): Promise<{ api: KubernetesObjectApi; kc: KubeConfig; namespace: string }> {
    const kc = await loadConfig({
      kubeconfig: luaOptionalString(fn, 'option kubeconfig', o.kubeconfig),
      context: luaOptionalString(fn, 'option kube_context', o.kube_context),
    });
    const { KubernetesObjectApi } = await import('@kubernetes/client-node');
    const contextNamespace = kc.getContextObject(kc.getCurrentContext())?.namespace;
    const namespace = luaOptionalString(fn, 'option namespace', o.namespace) ?? contextNamespace ?? 'default';
    return { api: KubernetesObjectApi.makeApiClient(kc), kc, namespace };
  }

  async function read(api: KubernetesObjectApi, header: KubernetesObject): Promise<KubernetesObject | null> {
    try {
      return await api.read(header as never);
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  return {
    apply: async (call, manifestArg, opts) => {
      const fn = 'k8s.apply';
      const o = readLuaOptions(fn, 2, opts, [...CLUSTER, 'namespace', 'context', 'syntax', 'field_manager', 'force']);
      let manifest = manifestArg;
      if (o.context !== undefined && o.context !== null) {
        if (typeof manifest !== 'string' || !isLuaTable(o.context)) {
          throw new InvalidInputError(`${fn}: option context (a table) renders the manifest given as template text`);
        }
        if (!options.render)
          throw new InvalidInputError(`${fn}: option context needs the template plugin, which is not loaded`);
        const syntax = luaOptionalString(fn, 'option syntax', o.syntax) ?? 'jinja';
        if (!(TEMPLATE_SYNTAXES as readonly string[]).includes(syntax))
          throw new InvalidInputError(`${fn}: option syntax must be jinja or go`);
        manifest = options.render(manifest, o.context as Record<string, unknown>, syntax as TemplateSyntax);
      }
      const objects = await manifestObjects(fn, manifest);
      const { api, namespace } = await client(fn, o);
      const fieldManager = luaOptionalString(fn, 'option field_manager', o.field_manager) ?? 'runner';
      const force = luaOptionalBoolean(fn, 'option force', o.force) ?? false;
      const { PatchStrategy } = await import('@kubernetes/client-node');
      const results: LuaValue[] = [];
      for (const object of objects) {
        const name = `${object.kind}/${object.metadata!.name}`;
        const target = {
          ...object,
          metadata: { ...object.metadata, namespace: object.metadata!.namespace ?? namespace },
        };
        try {
          const before = await read(api, target);
          // Server-side apply: the server merges and keeps what other managers own; in dry-run it
          // answers with the object as it would be, and stores nothing.
          const after = await api.patch(
            target,
            undefined,
            call.dryRun ? 'All' : undefined,
            fieldManager,
            force,
            PatchStrategy.ServerSideApply,
          );
          const changed =
            before === null
              ? true
              : call.dryRun
                ? comparable(before) !== comparable(after)
                : before.metadata?.resourceVersion !== after.metadata?.resourceVersion;
          results.push({
            name,
            namespace: after.metadata?.namespace ?? null,
            changed,
            action: before === null ? 'created' : changed ? 'configured' : 'unchanged',
          });
        } catch (error) {
          throw apiError(fn, `apply ${name}`, error);
        }
      }
      const changed = results.some((r) => (r as { changed: boolean }).changed);
      return { changed, objects: results, ...(call.dryRun ? { dry_run: true } : {}) };
    },
    get: async (_call, kindArg, nameArg, opts) => {
      const fn = 'k8s.get';
      const o = readLuaOptions(fn, 3, opts, [...CLUSTER, 'namespace', 'api_version', 'selector', 'all_namespaces']);
      const [kind, apiVersion] = resolveKind(
        fn,
        luaString(fn, 'argument 1 (kind)', kindArg),
        luaOptionalString(fn, 'option api_version', o.api_version),
      );
      const name = luaOptionalString(fn, 'argument 2 (name)', nameArg);
      const { api, namespace } = await client(fn, o);
      try {
        if (name) return toLuaValue(await read(api, { apiVersion, kind, metadata: { name, namespace } }));
        const all = luaOptionalBoolean(fn, 'option all_namespaces', o.all_namespaces);
        const selector = luaOptionalString(fn, 'option selector', o.selector);
        const list = await api.list(
          apiVersion,
          kind,
          all ? undefined : namespace,
          undefined,
          undefined,
          undefined,
          undefined,
          selector,
        );
        return toLuaValue(list.items);
      } catch (error) {
        throw apiError(fn, `get ${kind}${name ? `/${name}` : ''}`, error);
      }
    },
    delete: async (call, kindArg, nameArg, opts) => {
      const fn = 'k8s.delete';
      const o = readLuaOptions(fn, 3, opts, [...CLUSTER, 'namespace', 'api_version']);
      const [kind, apiVersion] = resolveKind(
        fn,
        luaString(fn, 'argument 1 (kind)', kindArg),
        luaOptionalString(fn, 'option api_version', o.api_version),
      );
      const name = luaString(fn, 'argument 2 (name)', nameArg);
      const { api, namespace } = await client(fn, o);
      const header = { apiVersion, kind, metadata: { name, namespace } };
      try {
        if ((await read(api, header)) === null) return { changed: false };
        if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would delete ${kind}/${name}` };
        await api.delete(header);
        return { changed: true };
      } catch (error) {
        if (isNotFound(error)) return { changed: false };
        throw apiError(fn, `delete ${kind}/${name}`, error);
      }
    },
    rollout_status: async (call, kindArg, nameArg, opts) => {
      const fn = 'k8s.rollout_status';
      const o = readLuaOptions(fn, 3, opts, [...CLUSTER, 'namespace', 'timeout']);
      const [kind, apiVersion] = resolveKind(fn, luaString(fn, 'argument 1 (kind)', kindArg), undefined);
      if (!['Deployment', 'StatefulSet', 'DaemonSet'].includes(kind)) {
        throw new InvalidInputError(`${fn}: a rollout is of a Deployment, StatefulSet or DaemonSet, not ${kind}`);
      }
      const name = luaString(fn, 'argument 2 (name)', nameArg);
      const timeoutMs =
        o.timeout === undefined || o.timeout === null
          ? 300_000
          : parseDurationArgument(o.timeout, `${fn}: option timeout`);
      const { api, namespace } = await client(fn, o);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        let object: KubernetesObject | null;
        try {
          object = await read(api, { apiVersion, kind, metadata: { name, namespace } });
        } catch (error) {
          throw apiError(fn, `read ${kind}/${name}`, error);
        }
        if (object === null) throw new InvalidInputError(`${fn}: ${kind}/${name} not found in namespace ${namespace}`);
        const state = rolloutDone(object);
        if (state.done) return { done: true, message: state.message };
        if (Date.now() >= deadline)
          throw new RunnerError('timeout', `${fn}: ${kind}/${name} did not finish its rollout: ${state.message}`);
        call.logger.debug(`${fn}: ${kind}/${name}: ${state.message}`);
        if (!(await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())), call.signal))) {
          throw new RunnerError('cancelled', `${fn}: cancelled`);
        }
      }
    },
    logs: async (_call, podArg, opts) => {
      const fn = 'k8s.logs';
      const o = readLuaOptions(fn, 2, opts, [
        ...CLUSTER,
        'namespace',
        'container',
        'tail',
        'since_seconds',
        'previous',
      ]);
      const pod = luaString(fn, 'argument 1 (pod)', podArg);
      const { kc, namespace } = await client(fn, o);
      const { CoreV1Api } = await import('@kubernetes/client-node');
      try {
        return await kc.makeApiClient(CoreV1Api).readNamespacedPodLog({
          name: pod,
          namespace,
          container: luaOptionalString(fn, 'option container', o.container),
          tailLines: luaOptionalNumber(fn, 'option tail', o.tail),
          sinceSeconds: luaOptionalNumber(fn, 'option since_seconds', o.since_seconds),
          previous: luaOptionalBoolean(fn, 'option previous', o.previous),
        });
      } catch (error) {
        throw apiError(fn, `logs of ${pod}`, error);
      }
    },
  };
}
