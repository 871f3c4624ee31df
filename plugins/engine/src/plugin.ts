import {
  HttpRouterRef,
  LuaRuntimeRef,
  StoreRef,
  TemplateEngineRef,
  WorkflowEngineRef,
  ScriptDoorRef,
  WorkflowParserRef,
  AgentDelegatorRef,
  AgentGroupsRef,
  ClusterRef,
  definePlugin,
  hasTable,
  killMarkedProcesses,
  ownerMark,
  OWNER_VARIABLE,
  ownerCgroup,
  killCgroup,
  confineResources,
  CONFINEMENT_VARIABLE,
  readResourceSettings,
  optional,
  ProcessGroupsRef,
  StateServiceRef,
  ExecutorCallServerRef,
  ConflictError,
  WorkflowMetricsRelayRef,
  type ExecutorCallServer,
  type ForwardedCallHandler,
  type LuaRuntime,
  type Cluster,
  type PluginContext,
  type StateRequest,
  type StateService,
  type Store,
  type WorkflowMetricsSink,
} from '@runner/plugin-sdk';
import { executionsCommand } from './executions-command-spec.js';
import { RETENTION_CONFIG, retentionSettings } from './retention-config.js';
import { RUN_LIMITS_CONFIG, runLimits } from './run-limits.js';
import { runCommand } from './run-command-spec.js';
import { WORKFLOW_FILES_CONFIG, workflowDirs } from './workflow-files.js';
import { routes } from './api.js';
import type { RunStore } from './run-store.js';

/**
 * The workflow engine. Everything heavy loads in setup; the `run` command's handler loads its
 * terminal view only when it runs.
 */
export const plugin = definePlugin({
  id: 'engine',
  version: '0.1.0',
  routes,
  description:
    'Runs workflows: dependency graph, parallel limit, groups, when, retry, timeout, loops, outputs, dry-run; records executions',
  profiles: ['master', 'embedded'],
  provides: [WorkflowEngineRef, WorkflowMetricsRelayRef, ScriptDoorRef, ExecutorCallServerRef],
  dependsOn: {
    parser: WorkflowParserRef,
    runtime: LuaRuntimeRef,
    template: TemplateEngineRef,
    store: StoreRef,
    http: optional(HttpRouterRef),
    delegator: optional(AgentDelegatorRef),
    // `delegate_to: group:web` (agent-groups plugin, on a master).
    groups: optional(AgentGroupsRef),
    processGroups: optional(ProcessGroupsRef),
    // state.* of the scripts the local executor runs is served from here (module-state).
    state: optional(StateServiceRef),
    // Several masters on one PostgreSQL store: run ownership, takeover, remote cancel and logs.
    cluster: optional(ClusterRef),
  },
  async schema() {
    const [{ RUN_MIGRATIONS }, { RUN_LIFECYCLE_MIGRATIONS, RUN_LIFECYCLE_OWNER }] = await Promise.all([
      import('./run-store.js'),
      import('./run-lifecycle-schema.js'),
    ]);
    return [
      { owner: 'engine', migrations: RUN_MIGRATIONS },
      { owner: RUN_LIFECYCLE_OWNER, migrations: RUN_LIFECYCLE_MIGRATIONS },
    ];
  },
  commands: [runCommand, executionsCommand],
  // What setup registers below (runs.retentionPolicies is the same function), for `runner db
  // stats` without a master; a store the engine never used has no runs table and no policy.
  async retention(store, config) {
    if (!(await hasTable(store, 'runs'))) return [];
    const { engineRetentionPolicies } = await import('./run-retention.js');
    return engineRetentionPolicies(store, retentionSettings(config), () => undefined);
  },
  config: {
    'engine.task_log_bytes': {
      schema: { type: 'integer', minimum: 1 },
      default: 256 * 1024,
      help: "bytes of a task's log kept in its run record (the rest is dropped, saying so)",
    },
    'engine.run_log_bytes': {
      schema: { type: 'integer', minimum: 0 },
      default: 1024 * 1024,
      help: "bytes of a run's task logs (all its tasks) written to the master's own log (runner.log, the terminal); the rest stays in the run record, and one line says so",
    },
    'engine.task_result_bytes': {
      schema: { type: 'integer', minimum: 1 },
      // run-store.ts DEFAULT_RESULT_BYTES, written out so the entry does not import the run store.
      default: 256 * 1024,
      help: "bytes of a task's message and outputs kept in its run record",
    },
    'engine.run_as': {
      schema: { type: 'string', minLength: 1 },
      default: 'auto',
      help: "who a master's local task scripts with side effects (files, commands, network) run as: 'auto' (the system user runner-exec, created on first start, when the master runs as root; refused otherwise), 'self' (the master's own user, which can read its data directory: accept that risk knowingly) or a user name (the master must run as root)",
    },
    ...RUN_LIMITS_CONFIG,
    ...RETENTION_CONFIG,
    ...WORKFLOW_FILES_CONFIG,
  },
  async setup(ctx, { parser, runtime, template, store, http, delegator, groups, processGroups, state, cluster }) {
    // The routes (and TypeBox, which their schemas need) only on a master: `runner run` has no HTTP.
    const [{ createEngine }, { RunStore }, routes, logStream, { startRunLifecycle }] = await Promise.all([
      import('./engine.js'),
      import('./run-store.js'),
      http ? import('./routes.js') : undefined,
      http ? import('./log-stream-route.js') : undefined,
      import('./run-lifecycle-start.js'),
    ]);
    const runs = new RunStore(store, ctx.config.get<number>('engine.task_result_bytes'), ctx.redactor);
    await runs.migrate();
    // Before any run starts: runs a dead process left `running` end `interrupted`.
    const lifecycle = await startRunLifecycle({ ctx, store, runs, processGroups, cluster });
    const shared = cluster?.shared ? await shareRuns(ctx, cluster, store, runs) : undefined;
    // Pruned by the store in the background (store.retention_interval); runner db stats shows them.
    const unretain = runs.retentionPolicies(retentionSettings(ctx.config)).map((policy) => store.retain(policy));
    // On a master, workflow code reaches the host only through the one door; embedded `runner run`
    // is the user's own process and runs it as the user.
    // metrics.* of the scripts the local executor runs reaches module-metrics' sink through here.
    let metricsSink: WorkflowMetricsSink | undefined;
    ctx.provide(WorkflowMetricsRelayRef, { attach: (sink) => void (metricsSink = sink) });
    // Module calls the local executor forwards: state.* here, others from the plugins that serve them.
    const calls = executorCalls(state);
    ctx.provide(ExecutorCallServerRef, calls.server);
    const door = ctx.profile === 'master' ? await openDoor(ctx, runtime, calls.handlers, () => metricsSink) : undefined;
    const engine = createEngine({
      parser,
      runtime,
      local: door,
      template,
      runs,
      delegator,
      groups,
      events: ctx.events,
      logger: ctx.logger,
      signal: ctx.signal,
      taskLogBytes: ctx.config.get<number>('engine.task_log_bytes'),
      runLogBytes: ctx.config.get<number>('engine.run_log_bytes'),
      ...runLimits(ctx.config),
      remote: shared,
      redactor: ctx.redactor,
    });
    shared?.serve(engine);
    ctx.provide(WorkflowEngineRef, engine);
    // Hook scripts come through the same door as local tasks (embedded: the user's own runtime).
    ctx.provide(
      ScriptDoorRef,
      door ?? { run: (source, options) => runtime.run(source, options), describe: () => 'you' },
    );
    if (http && routes && logStream) {
      routes.registerRoutes(
        http,
        engine,
        workflowDirs(ctx.config),
        ctx.redactor,
        { stored: (id) => runs.logTexts(id), live: (id) => engine.logOrder(id) },
        (filter) => runs.histogram(filter),
      );
      logStream.registerLogStreamRoute(http, engine, ctx.redactor, ctx.signal, shared);
    }
    // Runs still going when the kernel stops were cancelled through ctx.signal; wait for them to
    // record that before the store closes.
    ctx.onStop(async () => {
      await Promise.allSettled(engine.active());
      await runs.drain();
      await door?.stop();
      lifecycle.stop();
      shared?.stop();
      for (const off of unretain) off();
    });
  },
});

/**
 * With other masters on the store: their runs are cancelled and followed through the cluster, and
 * the executions list forgets what it kept when any master starts or ends a run (its counts and
 * first pages are kept per master).
 */
async function shareRuns(ctx: PluginContext, cluster: Cluster, store: Store, runs: RunStore) {
  const { RemoteRuns } = await import('./remote-runs.js');
  const changed = () => cluster.publish('engine.runs', null);
  const offs = [
    ctx.events.on('workflow.started', changed),
    ctx.events.on('workflow.completed', changed),
    ctx.events.on('workflow.failed', changed),
    cluster.subscribe('engine.runs', () => runs.forgetLists()),
  ];
  ctx.onStop(() => {
    for (const off of offs) off();
  });
  return new RemoteRuns(cluster, store, ctx.logger);
}

/**
 * The handlers of the module calls the local executor forwards (local-door.ts), by module: state.*
 * from module-state's service, which the engine depends on; other plugins register theirs through
 * ExecutorCallServerRef (they depend on the engine, so they cannot be its dependencies).
 */
function executorCalls(state: StateService | undefined) {
  const handlers = new Map<string, ForwardedCallHandler>();
  if (state) handlers.set('state', (request, caller, signal) => state.perform(request as StateRequest, caller, signal));
  const server: ExecutorCallServer = {
    serve(module, handler) {
      if (handlers.has(module)) throw new ConflictError(`forwarded calls of module ${module} are already served`);
      handlers.set(module, handler);
    },
  };
  return { handlers, server };
}

/**
 * The master's door for local scripts (local-door.ts): resolves engine.run_as, makes the data
 * directory the master's alone (0700), and ends what a previous master's executor left running
 * (the processes of its user that carry this data directory's mark).
 */
async function openDoor(
  ctx: PluginContext,
  runtime: LuaRuntime,
  calls: ReadonlyMap<string, ForwardedCallHandler>,
  metrics: () => WorkflowMetricsSink | undefined,
) {
  const [{ LocalDoor }, { resolveRunAs }, { chmod }] = await Promise.all([
    import('./local-door.js'),
    import('./run-as.js'),
    import('node:fs/promises'),
  ]);
  const dataDir = ctx.config.dataDir;
  await chmod(dataDir, 0o700).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT')
      ctx.logger.warn(`cannot make the data directory ${dataDir} private (0700): ${error.message}`);
  });
  const runAs = resolveRunAs(ctx.config.get<string>('engine.run_as'), dataDir);
  const owner = ownerMark(dataDir);
  const uid = runAs.kind === 'user' ? runAs.uid : process.getuid?.();
  // The executor's own cgroup (as root, with cgroup2): what its commands start stays in it, also
  // with a cleared environment, and what an earlier master's left there ends now.
  const cgroup = runAs.kind === 'user' ? ownerCgroup(owner) : undefined;
  if (runAs.kind !== 'refused' && uid !== undefined) {
    const killed = killMarkedProcesses(uid, owner) + (cgroup ? killCgroup(cgroup) : 0);
    if (killed) ctx.logger.warn(`ended ${killed} process(es) left by an earlier master's runs`);
  }
  // With `self` the master's own commands carry the mark (from its environment), as the
  // executor's do.
  if (runAs.kind === 'self') process.env[OWNER_VARIABLE] = owner;
  const resources = readResourceSettings(ctx.config);
  // resources.*: the executor and its commands (in its cgroups, entered before it starts
  // anything), or with `self` each command the master starts (which joins them as it starts).
  const confinement = runAs.kind === 'refused' ? undefined : confineResources(`runner-${owner}`, resources);
  const commandSetting = confinement?.commandSetting(runAs.kind === 'self');
  if (runAs.kind === 'self' && commandSetting) process.env[CONFINEMENT_VARIABLE] = commandSetting;
  for (const line of confinement?.lines ?? [])
    ctx.logger.info(`local tasks' resources (${confinement?.kind}): ${line}`);
  const door = new LocalDoor({
    runAs,
    runtime,
    calls,
    metrics,
    logger: ctx.logger,
    logBytes: ctx.config.get<number>('engine.task_log_bytes'),
    owner,
    cgroup,
    minFreeBytes: resources.minFreeBytes,
    confinement,
    diskPath: dataDir,
    settings: { ...executorSettings(ctx), ...(commandSetting ? { [CONFINEMENT_VARIABLE]: commandSetting } : {}) },
  });
  ctx.logger.info(
    runAs.kind === 'refused'
      ? `local tasks with side effects are refused (engine.run_as: ${ctx.config.get<string>('engine.run_as')}); see engine.run_as`
      : `local tasks with side effects run as ${door.describe()}`,
  );
  return door;
}

/** The lua-runtime's settings the executor gets from the master (its config keys, as RUNNER_* variables). */
const EXECUTOR_SETTINGS = [
  'lua.isolation',
  'lua.time_slice_ms',
  'lua.heap_guard_ratio',
  'lua.max_workers',
  'lua.idle_workers',
  'lua.pool_size',
];

function executorSettings(ctx: PluginContext): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const key of EXECUTOR_SETTINGS) {
    const value = ctx.config.get<unknown>(key);
    if (value !== undefined) settings[`RUNNER_${key.replace('.', '_').toUpperCase()}`] = String(value);
  }
  return settings;
}
