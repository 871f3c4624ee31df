// The REST routes this plugin serves, declared without handlers: the build writes the OpenAPI
// document and the UI client from them, the CLI builds commands from them (see RouteDeclaration).
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import * as s from './schemas.js';

const tags = ['flows'];
const view = Permissions.workflowView;
const edit = Permissions.workflowEdit;

export const getFlows = declareRoute({
  method: 'GET',
  path: '/flows',
  summary: 'list saved flows with their statistics (search by name, description or tag)',
  tags,
  permission: view,
  query: s.FlowListQuery,
  responses: { 200: s.FlowListSchema },
});

export const postFlows = declareRoute({
  method: 'POST',
  path: '/flows',
  summary: 'save a new flow (its YAML is validated as runner run would; version 1)',
  tags,
  permission: Permissions.workflowCreate,
  body: s.CreateFlowBody,
  responses: { 201: s.FlowSchema, 409: { description: 'a flow of that name exists' } },
});

export const getFlowsName = declareRoute({
  method: 'GET',
  path: '/flows/:name',
  summary: 'one flow with its current YAML',
  tags,
  permission: view,
  params: s.FlowParams,
  responses: { 200: s.FlowSchema },
});

export const putFlowsName = declareRoute({
  method: 'PUT',
  path: '/flows/:name',
  summary: 'change a flow; new YAML makes a new version (refused with 409 when base_version is not the current one)',
  tags,
  permission: edit,
  params: s.FlowParams,
  body: s.UpdateFlowBody,
  responses: { 200: s.FlowSchema, 409: { description: 'the flow changed since base_version: details say how' } },
});

export const deleteFlowsName = declareRoute({
  method: 'DELETE',
  path: '/flows/:name',
  summary: 'delete a flow with its history and queued runs (runs already started go on)',
  tags,
  permission: edit,
  params: s.FlowParams,
  responses: { 204: { description: 'deleted' } },
});

export const postFlowsNameActivate = declareRoute({
  method: 'POST',
  path: '/flows/:name/activate',
  summary: 'activate a flow: schedules and hooks may start it',
  tags,
  permission: edit,
  params: s.FlowParams,
  responses: { 200: s.FlowSchema },
});

export const postFlowsNameDeactivate = declareRoute({
  method: 'POST',
  path: '/flows/:name/deactivate',
  summary: 'deactivate a flow: schedules and hooks no longer start it (a manual run still may)',
  tags,
  permission: edit,
  params: s.FlowParams,
  responses: { 200: s.FlowSchema },
});

export const postFlowsNameRun = declareRoute({
  method: 'POST',
  path: '/flows/:name/run',
  summary: 'run a flow under its concurrency (an inactive flow runs too, recorded as a manual run)',
  tags,
  permission: Permissions.workflowExecute,
  params: s.FlowParams,
  body: s.RunBody,
  responses: { 202: s.RunAnswerSchema },
});

export const getFlowsNameVersions = declareRoute({
  method: 'GET',
  path: '/flows/:name/versions',
  summary: "a flow's versions, newest first (number, author, time, message)",
  tags,
  permission: view,
  params: s.FlowParams,
  responses: { 200: s.VersionListSchema },
});

export const getFlowsNameVersionsVersion = declareRoute({
  method: 'GET',
  path: '/flows/:name/versions/:version',
  summary: 'one version of a flow with its YAML',
  tags,
  permission: view,
  params: s.VersionParams,
  responses: { 200: s.VersionSchema },
});

export const getFlowsNameDiff = declareRoute({
  method: 'GET',
  path: '/flows/:name/diff',
  summary: "the line diff of two of a flow's versions (default: the current one and the one before)",
  tags,
  permission: view,
  params: s.FlowParams,
  query: s.DiffQuery,
  responses: { 200: s.DiffSchema },
});

export const postFlowsNameRestore = declareRoute({
  method: 'POST',
  path: '/flows/:name/restore',
  summary: 'restore an old version: its YAML becomes a new version',
  tags,
  permission: edit,
  params: s.FlowParams,
  body: s.RestoreBody,
  responses: { 200: s.FlowSchema },
});

export const postFlowsNameClone = declareRoute({
  method: 'POST',
  path: '/flows/:name/clone',
  summary: 'copy a flow under a new name (its current YAML as version 1, inactive)',
  tags,
  permission: Permissions.workflowCreate,
  params: s.FlowParams,
  body: s.CloneBody,
  responses: { 201: s.FlowSchema },
});

export const postFlowsExport = declareRoute({
  method: 'POST',
  path: '/flows/export',
  summary: 'export flows (some or all, with or without history) as one document for POST /flows/import',
  tags,
  permission: view,
  body: s.ExportBody,
  responses: { 200: s.ExportDocumentSchema },
});

export const postFlowsImport = declareRoute({
  method: 'POST',
  path: '/flows/import',
  summary: 'import an export document, all or nothing (409 listing every name that conflicts)',
  tags,
  permission: Permissions.workflowCreate,
  body: s.ExportDocumentSchema,
  responses: { 201: s.ImportAnswerSchema, 409: { description: 'names taken or repeated: nothing imported' } },
  bodyLimitBytes: 64 * 1024 * 1024,
});

export const getWorkflows = declareRoute({
  method: 'GET',
  path: '/workflows',
  summary: 'every workflow the master can run: saved flows and the files of the workflow directories',
  tags,
  permission: view,
  responses: { 200: s.WorkflowListSchema },
});

/** Every route above, for the plugin's definition. */
export const routes = [
  getFlows,
  postFlows,
  postFlowsExport,
  postFlowsImport,
  getFlowsName,
  putFlowsName,
  deleteFlowsName,
  postFlowsNameActivate,
  postFlowsNameDeactivate,
  postFlowsNameRun,
  getFlowsNameVersions,
  getFlowsNameVersionsVersion,
  getFlowsNameDiff,
  postFlowsNameRestore,
  postFlowsNameClone,
  getWorkflows,
];
