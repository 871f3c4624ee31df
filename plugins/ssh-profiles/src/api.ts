// The REST routes of SSH profiles (service.md section 4, plus test), declared without handlers: the
// build writes the OpenAPI document and the UI client from them, the CLI builds commands from them.
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import {
  AuditQuery,
  AuditSchema,
  CreateProfileBody,
  ProfileListSchema,
  ProfileParams,
  ProfileSchema,
  TestBody,
  TestResultSchema,
  UpdateProfileBody,
} from './schemas.js';

const tags = ['ssh'];

export const getSsh = declareRoute({
  method: 'GET',
  path: '/ssh',
  summary: 'list SSH profiles (never their credentials)',
  tags,
  permission: Permissions.sshView,
  responses: { 200: ProfileListSchema },
});

export const postSsh = declareRoute({
  method: 'POST',
  path: '/ssh',
  summary: 'create an SSH profile (a password or key given here is stored encrypted)',
  tags,
  permission: Permissions.sshManage,
  body: CreateProfileBody,
  responses: { 201: ProfileSchema, 409: { description: 'a profile of that name exists' } },
});

export const getSshName = declareRoute({
  method: 'GET',
  path: '/ssh/:name',
  summary: 'one SSH profile',
  tags,
  permission: Permissions.sshView,
  params: ProfileParams,
  responses: { 200: ProfileSchema },
});

export const putSshName = declareRoute({
  method: 'PUT',
  path: '/ssh/:name',
  summary: 'replace an SSH profile (a stored credential not given again is kept while the auth type stays)',
  tags,
  permission: Permissions.sshManage,
  params: ProfileParams,
  body: UpdateProfileBody,
  responses: { 200: ProfileSchema },
});

export const deleteSshName = declareRoute({
  method: 'DELETE',
  path: '/ssh/:name',
  summary: 'delete an SSH profile, its stored credential and its audit log',
  tags,
  permission: Permissions.sshManage,
  params: ProfileParams,
  responses: { 204: { description: 'deleted' } },
});

export const postSshNameTest = declareRoute({
  method: 'POST',
  path: '/ssh/:name/test',
  summary: 'connect, run uname -a, disconnect (trust_host_key pins the key of a profile that has none)',
  tags,
  permission: Permissions.sshUse,
  params: ProfileParams,
  body: TestBody,
  responses: { 200: TestResultSchema },
});

export const getSshNameAudit = declareRoute({
  method: 'GET',
  path: '/ssh/:name/audit',
  summary: "a profile's audit log, newest first",
  tags,
  permission: Permissions.sshView,
  params: ProfileParams,
  query: AuditQuery,
  responses: { 200: AuditSchema },
});

export const routes = [getSsh, postSsh, getSshName, putSshName, deleteSshName, postSshNameTest, getSshNameAudit];
