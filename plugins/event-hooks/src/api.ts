// The REST routes this plugin serves (service.md section 4), declared without handlers: the build
// writes the OpenAPI document and the UI client from them, the CLI builds commands from them.
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import {
  CreateHookBody,
  HistoryQuery,
  HistorySchema,
  HookEventsSchema,
  HookListSchema,
  HookParams,
  HookSchema,
  TestHookBody,
  TestResultSchema,
  UpdateHookBody,
} from './schemas.js';

const tags = ['hooks'];
const params = HookParams;

export const getHooks = declareRoute({
  method: 'GET',
  path: '/hooks',
  summary: 'list hooks in the order they run, with executions and success rate',
  tags,
  permission: Permissions.hookView,
  responses: { 200: HookListSchema },
});

export const postHooks = declareRoute({
  method: 'POST',
  path: '/hooks',
  summary: 'create a hook (its script is compiled first: refused with line and column)',
  tags,
  permission: Permissions.hookEdit,
  body: CreateHookBody,
  responses: { 201: HookSchema, 409: { description: 'a hook of that name exists' } },
});

export const getHooksId = declareRoute({
  method: 'GET',
  path: '/hooks/:id',
  summary: 'one hook (by id or name)',
  tags,
  permission: Permissions.hookView,
  params,
  responses: { 200: HookSchema },
});

export const putHooksId = declareRoute({
  method: 'PUT',
  path: '/hooks/:id',
  summary: 'change a hook (fields not given stay as they are)',
  tags,
  permission: Permissions.hookEdit,
  params,
  body: UpdateHookBody,
  responses: { 200: HookSchema },
});

export const deleteHooksId = declareRoute({
  method: 'DELETE',
  path: '/hooks/:id',
  summary: 'delete a hook and its history',
  tags,
  permission: Permissions.hookEdit,
  params,
  responses: { 204: { description: 'deleted' } },
});

export const postHooksIdEnable = declareRoute({
  method: 'POST',
  path: '/hooks/:id/enable',
  summary: 'enable a hook',
  tags,
  permission: Permissions.hookEdit,
  params,
  responses: { 200: HookSchema },
});

export const postHooksIdDisable = declareRoute({
  method: 'POST',
  path: '/hooks/:id/disable',
  summary: 'disable a hook (events go on being stored; it does not run on them)',
  tags,
  permission: Permissions.hookEdit,
  params,
  responses: { 200: HookSchema },
});

export const getHooksIdHistory = declareRoute({
  method: 'GET',
  path: '/hooks/:id/history',
  summary: "a hook's executions, newest first",
  tags,
  permission: Permissions.hookView,
  params,
  query: HistoryQuery,
  responses: { 200: HistorySchema },
});

export const postHooksIdTest = declareRoute({
  method: 'POST',
  path: '/hooks/:id/test',
  summary: 'run a hook on a sample or given payload and report the result (not kept in its history)',
  tags,
  permission: Permissions.hookEdit,
  params,
  body: TestHookBody,
  responses: { 200: TestResultSchema },
});

export const getHookEvents = declareRoute({
  method: 'GET',
  path: '/hook-events',
  summary: 'the events and patterns a hook may name, with what each means',
  tags,
  permission: Permissions.hookView,
  responses: { 200: HookEventsSchema },
});

/** Every route above, for the plugin's definition. */
export const routes = [
  getHookEvents,
  getHooks,
  postHooks,
  getHooksId,
  putHooksId,
  deleteHooksId,
  postHooksIdEnable,
  postHooksIdDisable,
  getHooksIdHistory,
  postHooksIdTest,
];
