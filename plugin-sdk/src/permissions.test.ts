import { describe, expect, it } from 'vitest';
import {
  PERMISSION_DESCRIPTIONS,
  Permissions,
  principalFor,
  type Permission,
  roleAllows,
  ROLE_PERMISSIONS,
  ROLES,
} from './permissions.js';

describe('the role table', () => {
  it('grants the permissions of service.md section 5', () => {
    const spec: Record<string, string[]> = {
      operator: ['workflow:execute', 'agent:view', 'agent:restart', 'logs:view'],
      developer: ['workflow:create', 'workflow:edit', 'workflow:execute', 'logs:view'],
      viewer: ['workflow:view', 'agent:view', 'logs:view'],
    };
    for (const [role, permissions] of Object.entries(spec)) {
      for (const permission of permissions)
        expect(roleAllows(role, permission as Permission), `${role} ${permission}`).toBe(true);
    }
  });

  it('gives admin everything, a plugin’s own permissions too, and unknown roles only public', () => {
    for (const permission of Object.values(Permissions)) expect(roleAllows('admin', permission)).toBe(true);
    expect(roleAllows('admin', 'backup:restore')).toBe(true);
    expect(roleAllows('intruder', Permissions.workflowView)).toBe(false);
    expect(roleAllows('intruder', Permissions.public)).toBe(true);
  });

  it('keeps user, token, secret, audit and system permissions to admin', () => {
    const adminOnly = [
      Permissions.userManage,
      Permissions.tokenManage,
      Permissions.secretManage,
      Permissions.auditView,
      Permissions.systemAdmin,
      Permissions.agentManage,
      Permissions.agentExec,
      Permissions.agentStop,
      Permissions.groupManage,
      Permissions.configEdit,
    ];
    for (const role of ROLES.filter((r) => r !== 'admin')) {
      for (const permission of adminOnly) expect(roleAllows(role, permission), `${role} ${permission}`).toBe(false);
    }
    expect(ROLE_PERMISSIONS.viewer).not.toContain(Permissions.workflowExecute);
  });

  it('describes every built-in permission, for the roles table the API serves', () => {
    for (const permission of Object.values(Permissions).filter((p) => p !== Permissions.public)) {
      expect(PERMISSION_DESCRIPTIONS[permission], permission).toMatch(/\w/);
    }
  });

  it('makes principals whose can() is their role’s', () => {
    const viewer = principalFor({ id: 'u1', name: 'vic', role: 'viewer', method: 'basic' });
    expect(viewer.can('agent:view')).toBe(true);
    expect(viewer.can('agent:exec')).toBe(false);
  });
});
