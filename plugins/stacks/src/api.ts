// The REST routes this plugin serves (service.md section 4), declared without handlers.
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import {
  CreateStackBody,
  StackListSchema,
  StackParams,
  StackSchema,
  UpdateStackBody,
  VariableBody,
  VariableParams,
} from './schemas.js';

const tags = ['stacks'];

export const getStacks = declareRoute({
  method: 'GET',
  path: '/stacks',
  summary: 'list stacks with their variables, counts and last execution',
  tags,
  permission: Permissions.stackView,
  responses: { 200: StackListSchema },
});

export const getStacksName = declareRoute({
  method: 'GET',
  path: '/stacks/:name',
  summary: 'one stack',
  tags,
  permission: Permissions.stackView,
  params: StackParams,
  responses: { 200: StackSchema },
});

export const postStacks = declareRoute({
  method: 'POST',
  path: '/stacks',
  summary: 'create a stack',
  tags,
  permission: Permissions.stackManage,
  body: CreateStackBody,
  responses: { 201: StackSchema, 409: { description: 'a stack of that name exists' } },
});

export const putStacksName = declareRoute({
  method: 'PUT',
  path: '/stacks/:name',
  summary: "change a stack's description, environment or active flag",
  tags,
  permission: Permissions.stackManage,
  params: StackParams,
  body: UpdateStackBody,
  responses: { 200: StackSchema },
});

export const deleteStacksName = declareRoute({
  method: 'DELETE',
  path: '/stacks/:name',
  summary: 'remove a stack (refused while it holds secrets)',
  tags,
  permission: Permissions.stackManage,
  params: StackParams,
  responses: { 204: { description: 'removed' } },
});

export const postStacksNameVariables = declareRoute({
  method: 'POST',
  path: '/stacks/:name/variables',
  summary: 'set a variable of a stack (added, or its value replaced)',
  tags,
  permission: Permissions.stackManage,
  params: StackParams,
  body: VariableBody,
  responses: { 200: StackSchema },
});

export const deleteStacksNameVariablesKey = declareRoute({
  method: 'DELETE',
  path: '/stacks/:name/variables/:key',
  summary: 'remove a variable of a stack',
  tags,
  permission: Permissions.stackManage,
  params: VariableParams,
  responses: { 200: StackSchema },
});

export const routes = [
  getStacks,
  getStacksName,
  postStacks,
  putStacksName,
  deleteStacksName,
  postStacksNameVariables,
  deleteStacksNameVariablesKey,
];
