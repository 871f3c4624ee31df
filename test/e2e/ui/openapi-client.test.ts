// The UI's REST client is typed from ui/src/lib/api/openapi.json, which the build writes from the
// plugins' route declarations without a master (scripts/openapi.mjs): it must be the document a
// master serves, or the types describe an API the master does not have.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { repoRoot } from '../helpers.js';
import { apiCall, Fleet, type Master } from './fleet.js';

const fleet = new Fleet();
let master: Master;

beforeAll(async () => {
  master = await fleet.master();
}, 60_000);

afterAll(() => fleet.stop());

it("generates the UI's client from the OpenAPI document the master serves", async () => {
  const served = await apiCall<{ paths: Record<string, unknown> }>(master, 'GET', '/openapi.json');
  const kept = JSON.parse(readFileSync(join(repoRoot, 'ui/src/lib/api/openapi.json'), 'utf8'));
  expect(kept, 'ui/src/lib/api/openapi.json (written by npm run build) differs from what the master serves').toEqual(
    served,
  );
});
