import type { paths } from '$lib/api/schema';

/** Shapes of the stacks and secrets APIs, from the generated OpenAPI types (never a secret's value). */
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type Stack = Json<paths['/api/v1/stacks/{name}']['get']['responses'][200]>;
export type SecretListing = Json<paths['/api/v1/secrets/{stack}']['get']['responses'][200]>['secrets'][number];
