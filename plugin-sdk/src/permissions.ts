/**
 * Permission strings routes declare and roles grant (service.md section 5 and the resources the
 * later issues add). Routes name a permission; the auth plugin's role table maps roles to them.
 * `public` marks the few routes anyone may call (health, login, the OpenAPI document).
 */
export const Permissions = Object.freeze({
  public: 'public',
  workflowView: 'workflow:view',
  workflowExecute: 'workflow:execute',
  workflowCreate: 'workflow:create',
  workflowEdit: 'workflow:edit',
  workflowCancel: 'workflow:cancel',
  agentView: 'agent:view',
  agentExec: 'agent:exec',
  agentRestart: 'agent:restart',
  agentManage: 'agent:manage',
  logsView: 'logs:view',
  metricsView: 'metrics:view',
  auditView: 'audit:view',
  configView: 'config:view',
  userManage: 'user:manage',
  tokenManage: 'token:manage',
  systemAdmin: 'system:admin',
  secretManage: 'secret:manage',
  hookView: 'hook:view',
  hookEdit: 'hook:edit',
} as const);

/** A permission string such as `workflow:execute`; plugins may define their own `<resource>:<action>`. */
export type Permission = (typeof Permissions)[keyof typeof Permissions] | `${string}:${string}`;

/** Who is calling: set by the authentication guard, read by authorization, audit and handlers. */
export interface Principal {
  /** Stable id of the user, token or agent. */
  id: string;
  /** User name shown in records (`admin`, `ci-token`). */
  name: string;
  role: string;
  /** How the caller proved who it is. */
  method: 'basic' | 'jwt' | 'token' | 'local' | 'oidc' | 'ldap' | 'none';
  /** True when the caller holds this permission. */
  can(permission: Permission): boolean;
}
