import type { Redactor } from '@runner/plugin-sdk';

type Write = NodeJS.WritableStream['write'];

/**
 * Makes every write to these streams (the CLI's stdout and stderr) pass the redactor: whatever a
 * command prints (a run's live view, `--output json`, a REPL's results, a plugin's own lines)
 * leaves the process with registered secrets masked. Text chunks are redacted; a byte chunk only
 * when a secret is registered and it holds one. Patched on the stream itself, beneath any later
 * wrapper (the run view redirects stderr above its live lines), so that wrappers calling the
 * write they found still end here. Returns a function that puts the original writes back.
 *
 * A secret split across two writes is not seen whole; commands write whole lines.
 */
export function redactWrites(streams: readonly NodeJS.WritableStream[], redactor: Redactor): () => void {
  const restores = [...new Set(streams)].map((stream) => {
    const original = stream.write;
    const redacting = function (this: NodeJS.WritableStream, chunk: unknown, ...rest: unknown[]) {
      let safe = chunk;
      if (typeof chunk === 'string') safe = redactor.redactText(chunk);
      else if (chunk instanceof Uint8Array && redactor.hasSecrets()) {
        const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8');
        const masked = redactor.redactText(text);
        if (masked !== text) safe = masked;
      }
      return (original as (...args: unknown[]) => boolean).call(this, safe, ...rest);
    } as Write;
    stream.write = redacting;
    return () => {
      if (stream.write === redacting) stream.write = original;
    };
  });
  return () => {
    for (const restore of restores) restore();
  };
}
