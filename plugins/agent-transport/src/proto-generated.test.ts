// The TypeScript types of runner.proto are generated and committed (proto/generated). They must
// be exactly what proto-loader-gen-types makes of the proto today: nothing hand-written, no drift.
import { committed, generate } from '@runner/proto/generate';
import { describe, expect, it } from 'vitest';

describe('proto/generated', () => {
  it('matches what `npm run generate -w @runner/proto` produces from runner.proto', async () => {
    const fresh = await generate();
    const kept = committed();
    expect([...kept.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [file, text] of fresh) {
      expect(kept.get(file), `proto/generated/${file} is out of date: run npm run generate -w @runner/proto`).toBe(
        text,
      );
    }
  }, 60_000);
});
