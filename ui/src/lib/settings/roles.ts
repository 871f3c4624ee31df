import type { paths } from '$lib/api/schema';

/** A role as the users and tokens APIs take it (the generated type of the OpenAPI document). */
export type Role = NonNullable<paths['/api/v1/users']['post']['requestBody']>['content']['application/json']['role'];

/** Every role, weakest first: the order the role pickers list them in. */
export const ROLES: Role[] = ['viewer', 'developer', 'operator', 'admin'];
