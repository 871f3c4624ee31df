import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createRedactor } from '@runner/plugin-sdk';
import { redactWrites } from './redacted-output.js';

function collector(): Writable & { text: string } {
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out.text += chunk.toString('utf8');
      done();
    },
  }) as Writable & { text: string };
  out.text = '';
  return out;
}

describe('redactWrites', () => {
  it('masks registered secrets in text and byte chunks, under later wrappers, until restored', () => {
    const redactor = createRedactor();
    const out = collector();
    const restore = redactWrites([out, out], redactor);
    out.write('before any secret: hunter22\n');
    redactor.addSecret('hunter22');
    out.write('text hunter22\n');
    out.write(Buffer.from('bytes hunter22\n'));
    // A later wrapper (as the run view installs on stderr) calls the write it found: ours.
    const found = out.write.bind(out) as (chunk: string) => boolean;
    const ours = out.write;
    out.write = ((chunk: string) => found(`[wrapped] ${chunk}`)) as typeof out.write;
    out.write('wrapped hunter22\n');
    out.write = ours;
    restore();
    out.write('restored hunter22\n');
    expect(out.text).toBe(
      'before any secret: hunter22\ntext ***\nbytes ***\n[wrapped] wrapped ***\nrestored hunter22\n',
    );
  });
});
