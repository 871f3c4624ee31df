// The REST routes this plugin serves, declared without handlers (see RouteDeclaration).
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import {
  PutSecretAnswer,
  PutSecretBody,
  RotateAnswer,
  SecretListSchema,
  SecretParams,
  StackParams,
} from './schemas.js';

const tags = ['secrets'];

export const getSecretsStack = declareRoute({
  method: 'GET',
  path: '/secrets/:stack',
  summary: "names of a stack's secrets, their last update and the flows that use them (never values)",
  tags,
  permission: Permissions.secretView,
  params: StackParams,
  responses: { 200: SecretListSchema },
});

export const putSecretsStackName = declareRoute({
  method: 'PUT',
  path: '/secrets/:stack/:name',
  summary: 'set a secret of a stack (sealed before it is stored; the answer holds no value)',
  tags,
  permission: Permissions.secretManage,
  params: SecretParams,
  body: PutSecretBody,
  responses: { 200: PutSecretAnswer },
});

export const deleteSecretsStackName = declareRoute({
  method: 'DELETE',
  path: '/secrets/:stack/:name',
  summary: 'remove a secret of a stack',
  tags,
  permission: Permissions.secretManage,
  params: SecretParams,
  responses: { 204: { description: 'removed' } },
});

export const postSecretsRotateKey = declareRoute({
  method: 'POST',
  path: '/secrets/rotate-key',
  summary: 'a new key; every secret of every scope sealed again under it, all or nothing',
  tags,
  permission: Permissions.secretManage,
  responses: { 200: RotateAnswer },
});

/** Every route above, for the plugin's definition. */
export const routes = [getSecretsStack, putSecretsStackName, deleteSecretsStackName, postSecretsRotateKey];
