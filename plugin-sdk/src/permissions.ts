/**
 * Permission strings routes declare and roles grant (service.md section 5 and the resources the
 * later issues add). Routes name a permission; `ROLE_PERMISSIONS` below is the one table mapping
 * roles to them. `public` marks the few routes anyone may call (health, login, the OpenAPI
 * document); `account:self` is what every signed-in caller holds (who am I, log out).
 */
export const Permissions = Object.freeze({
  public: 'public',
  accountSelf: 'account:self',
  workflowView: 'workflow:view',
  workflowExecute: 'workflow:execute',
  workflowCreate: 'workflow:create',
  workflowEdit: 'workflow:edit',
  workflowCancel: 'workflow:cancel',
  agentView: 'agent:view',
  agentExec: 'agent:exec',
  agentRestart: 'agent:restart',
  agentStop: 'agent:stop',
  agentManage: 'agent:manage',
  agentInstall: 'agent:install',
  groupView: 'group:view',
  groupManage: 'group:manage',
  logsView: 'logs:view',
  metricsView: 'metrics:view',
  auditView: 'audit:view',
  configView: 'config:view',
  configEdit: 'config:edit',
  userManage: 'user:manage',
  tokenManage: 'token:manage',
  systemAdmin: 'system:admin',
  secretView: 'secret:view',
  secretManage: 'secret:manage',
  stackView: 'stack:view',
  stackManage: 'stack:manage',
  hookView: 'hook:view',
  hookEdit: 'hook:edit',
  scheduleView: 'schedule:view',
  scheduleManage: 'schedule:manage',
  eventView: 'event:view',
  eventRetry: 'event:retry',
  gitopsView: 'gitops:view',
  gitopsSync: 'gitops:sync',
  sshView: 'ssh:view',
  sshUse: 'ssh:use',
  sshManage: 'ssh:manage',
  terminalOpen: 'terminal:open',
} as const);

/** What each built-in permission allows, for the roles table the API and `runner auth roles` show. */
export const PERMISSION_DESCRIPTIONS: Readonly<Record<string, string>> = Object.freeze({
  [Permissions.accountSelf]: 'see who you are, change your password, log out',
  [Permissions.workflowView]: 'read workflows and their runs',
  [Permissions.workflowExecute]: 'run workflows (and validate them)',
  [Permissions.workflowCreate]: 'create workflows',
  [Permissions.workflowEdit]: 'edit workflows',
  [Permissions.workflowCancel]: 'cancel runs',
  [Permissions.agentView]: 'read agents, their metrics and modules',
  [Permissions.agentExec]: 'run a shell command on an agent',
  [Permissions.agentRestart]: 'restart an agent',
  [Permissions.agentStop]: 'stop an agent (it stays down)',
  [Permissions.agentManage]: 'enrol, install, update, revoke and remove agents',
  [Permissions.agentInstall]:
    "install an agent on a host through an SSH profile (the master connects with the profile's credentials)",
  [Permissions.groupView]: 'read agent groups',
  [Permissions.groupManage]: 'create, change and delete agent groups',
  [Permissions.logsView]: "read the master's log and run logs",
  [Permissions.metricsView]: 'read metrics and the dashboard',
  [Permissions.auditView]: 'read the audit log',
  [Permissions.configView]: 'read the configuration',
  [Permissions.configEdit]: 'change the configuration',
  [Permissions.userManage]: 'manage users',
  [Permissions.tokenManage]: 'manage API tokens',
  [Permissions.systemAdmin]: 'database and system administration',
  [Permissions.secretView]: "read secrets' names, last update and the flows using them (never values)",
  [Permissions.secretManage]: 'add, replace and remove secrets, rotate their key',
  [Permissions.stackView]: 'read stacks (environments) and their variables',
  [Permissions.stackManage]: 'create, change and remove stacks and their variables',
  [Permissions.hookView]: 'read hooks',
  [Permissions.hookEdit]: 'create and change hooks',
  [Permissions.scheduleView]: 'read scheduler jobs, their next runs and history',
  [Permissions.scheduleManage]: 'add, change, enable, disable, remove and run scheduler jobs',
  [Permissions.eventView]: 'read the event queue and each hook result on an event',
  [Permissions.eventRetry]: 'retry a failed event (its failed hooks run again)',
  [Permissions.gitopsView]: 'read the GitOps status (applied commit, drift) and what a sync would change',
  [Permissions.gitopsSync]: 'sync flows, hooks and schedules from the GitOps repository',
  [Permissions.sshView]: 'read SSH profiles (never their credentials) and their audit logs',
  [Permissions.sshUse]: 'test an SSH profile (connects to its host)',
  [Permissions.sshManage]:
    "create, change and remove SSH profiles, and allow workflows to use one (the profile's workflows flag)",
  [Permissions.terminalOpen]: "open an interactive shell on an agent's host or through an SSH profile",
});

/** A permission string such as `workflow:execute`; plugins may define their own `<resource>:<action>`. */
export type Permission = (typeof Permissions)[keyof typeof Permissions] | `${string}:${string}`;

/** The built-in roles, lowest first. */
export const ROLES = Object.freeze(['viewer', 'developer', 'operator', 'admin'] as const);
export type Role = (typeof ROLES)[number];

const P = Permissions;

/**
 * The one role table (service.md section 5, "Roles (RBAC)"), with the permissions the spec's
 * table does not list but other resources need. Admin holds every permission, including any a
 * plugin defines. What the spec leaves open, decided here:
 * - everyone signed in holds `account:self`, and every role that sees workflows sees their runs;
 * - Operator holds what service.md gives it (`workflow:execute`, `agent:view`, `agent:restart`,
 *   `logs:view`), plus reading what those act on (runs, groups, metrics, hooks, schedules) and cancelling
 *   runs; running a shell command on an agent (`agent:exec`), stopping an agent (`agent:stop`:
 *   restart brings it back, stop does not) and managing agent groups (`group:manage`) reach past a
 *   workflow's reviewed code, so they are Admin's unless granted;
 * - Developer writes and runs workflows, hooks (`hook:edit`) and schedules (`schedule:manage`,
 *   issue 20), retries failed events (`event:retry`), cancels runs, sees agents;
 * - every role that reads hooks reads the events they run on (`event:view`);
 * - every role reads the GitOps status and diff (`gitops:view`); Developer, who edits workflows,
 *   syncs them from the repository (`gitops:sync`);
 * - every role sees agent groups (`group:view`): they are targets workflows name;
 * - Viewer reads workflows, agents, agent groups, logs, metrics, hooks and schedules, and changes nothing;
 * - SSH profiles (issue 22): Viewer, Developer and Operator read them and their audit logs
 *   (`ssh:view`), Operator may test one (`ssh:use`); only Admin creates or changes one (`ssh:manage`),
 *   which includes allowing workflows to use it (a profile's `workflows` flag: a workflow run acts
 *   with no user's permissions, so the profile says whether any workflow may), and opens terminals
 *   (`terminal:open`: a shell reaches past every reviewed workflow);
 * - every role sees stacks (`stack:view`): runs name them; Operator and Developer, who run
 *   workflows, see the names of their secrets (`secret:view`, never a value);
 * - only Admin installs agents through an SSH profile (`agent:install`: the master connects with the
 *   profile's credentials, which no other role may use beyond a test);
 * - only Admin manages users, tokens, secrets, stacks, agents (exec, stop, remove, enrol), agent groups,
 *   configuration and the database, and reads the audit log.
 * `GET /api/v1/auth/roles` and `runner auth roles` serve this table.
 */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[] | '*'>> = Object.freeze({
  admin: '*',
  operator: [
    P.accountSelf,
    P.workflowView,
    P.workflowExecute,
    P.workflowCancel,
    P.agentView,
    P.agentRestart,
    P.groupView,
    P.logsView,
    P.metricsView,
    P.hookView,
    P.scheduleView,
    P.eventView,
    P.gitopsView,
    P.sshView,
    P.sshUse,
    P.stackView,
    P.secretView,
  ],
  developer: [
    P.accountSelf,
    P.workflowView,
    P.workflowCreate,
    P.workflowEdit,
    P.workflowExecute,
    P.workflowCancel,
    P.agentView,
    P.groupView,
    P.logsView,
    P.metricsView,
    P.hookView,
    P.hookEdit,
    P.scheduleView,
    P.scheduleManage,
    P.eventView,
    P.eventRetry,
    P.gitopsView,
    P.gitopsSync,
    P.sshView,
    P.stackView,
    P.secretView,
  ],
  viewer: [
    P.accountSelf,
    P.workflowView,
    P.agentView,
    P.groupView,
    P.logsView,
    P.metricsView,
    P.hookView,
    P.scheduleView,
    P.eventView,
    P.gitopsView,
    P.sshView,
    P.stackView,
  ],
});

const granted = new Map<string, ReadonlySet<string> | '*'>(
  Object.entries(ROLE_PERMISSIONS).map(([role, list]) => [role, list === '*' ? '*' : new Set(list)]),
);

/** True for one of the built-in role names. */
export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Whether `role` holds `permission` by the table above; `public` is held by everyone, unknown roles hold nothing else. */
export function roleAllows(role: string, permission: Permission): boolean {
  if (permission === P.public) return true;
  const set = granted.get(role);
  return set === '*' || (set !== undefined && set.has(permission));
}

/**
 * What a WebSocket client must hold to receive a message or bus event of a type: by the whole type
 * (`agent_update`), else by its first word (`workflow.started` -> `workflow`). Types not listed
 * need `workflow:view`, what opening the WebSocket takes.
 */
const STREAM_PERMISSIONS: Readonly<Record<string, Permission>> = Object.freeze({
  workflow: P.workflowView,
  task: P.workflowView,
  workflow_update: P.workflowView,
  agent: P.agentView,
  agent_update: P.agentView,
  agent_group_update: P.groupView,
  hook: P.hookView,
  hook_execution: P.hookView,
  event_update: P.eventView,
  secret_update: P.secretView,
  stack_update: P.stackView,
  system_metrics: P.metricsView,
  system_alert: P.metricsView,
  log: P.logsView,
  audit: P.auditView,
  user: P.userManage,
  token: P.tokenManage,
  config: P.configView,
});

export function streamPermission(type: string): Permission {
  return STREAM_PERMISSIONS[type] ?? STREAM_PERMISSIONS[type.split('.')[0]] ?? P.workflowView;
}

/** Who is calling: set by the authentication guard, read by authorization, audit and handlers. */
export interface Principal {
  /** Stable id of the user, token or agent. */
  id: string;
  /** User name shown in records (`admin`, `ci-token`). */
  name: string;
  role: string;
  /** How the caller proved who it is. */
  method: 'basic' | 'jwt' | 'token' | 'local' | 'oidc' | 'ldap' | 'none';
  /** The session (JWT id) a `jwt` principal came with: logging it out ends what it opened. */
  session?: string;
  /** True when the caller holds this permission. */
  can(permission: Permission): boolean;
}

/** A principal whose permissions are its role's. */
export function principalFor(identity: Omit<Principal, 'can'>): Principal {
  return { ...identity, can: (permission) => roleAllows(identity.role, permission) };
}
