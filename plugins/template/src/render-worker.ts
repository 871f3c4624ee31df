/**
 * A template worker process (render-pool.ts): renders what the master's thread must not, one
 * template at a time. Its pool kills it at the rendering's timeout; V8 ends it at its heap limit;
 * it ends with its master (the channel closes, also when the master was SIGKILLed).
 */
import { TemplateError } from '@runner/plugin-sdk';
import { createTemplateEngine } from './engine.js';
import type { RenderJob, RenderReply } from './render-pool.js';

const engine = createTemplateEngine({ cacheSize: 200 });
const send = (reply: RenderReply | { ready: true }) => process.send?.(reply);

process.on('disconnect', () => process.exit(0));
process.on('message', (job: RenderJob) => {
  let reply: RenderReply;
  try {
    reply = { id: job.id, text: engine.render(job.source, job.context, { syntax: job.syntax, name: job.name }) };
  } catch (error) {
    reply =
      error instanceof TemplateError
        ? {
            id: job.id,
            error: {
              kind: error.kind,
              reason: error.reason,
              line: error.line,
              column: error.column,
              name: error.templateName,
              variable: error.variable,
            },
          }
        : {
            id: job.id,
            error: { kind: 'render', reason: String((error as Error)?.message ?? error), line: 1, column: 1 },
          };
  }
  send(reply);
});
send({ ready: true });
