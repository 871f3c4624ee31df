import * as api from './api.js';
import {
  serve,
  NotFoundError,
  openEventStream,
  STREAMED,
  type HttpRouter,
  type LogFollowerEvent,
  type Redactor,
  type WorkflowEngine,
} from '@runner/plugin-sdk';

import { lineMatches } from './run-log.js';
import type { RemoteRuns } from './remote-runs.js';

/** Lines written within this window go out as one event: a chatty task writes thousands a second. */
const BATCH_MS = 100;
/** Keeps proxies from closing the stream of a quiet task. */
const HEARTBEAT_MS = 15_000;
/** A client this far behind is dropped; its EventSource reconnects and reads the tail again. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/**
 * `GET /executions/:id/log/stream`: a running run's log lines as they are written, so the run view
 * follows the tail without polling. `ready` says how many lines the log held when following began
 * (`written`); `lines` events carry the lines written since, each with its `seq` (position in the
 * order lines were written), so a client that reads the tail page afterwards skips the lines with
 * a `seq` below that page's `total`; `end` comes when the run ends (at once for an ended run).
 */
export function registerLogStreamRoute(
  router: HttpRouter,
  engine: WorkflowEngine,
  redactor: Redactor | undefined,
  signal: AbortSignal,
  /** Runs of other masters sharing the store, followed through the cluster (remote-runs.ts). */
  remote?: Pick<RemoteRuns, 'followLog'>,
): void {
  router.add(
    serve(api.getExecutionsIdLogStream, async ({ params, query, raw }) => {
      const summary = await engine.get(params.id, { log: false });
      if (!summary) throw new NotFoundError(`no execution with id "${params.id}"`);
      const stream = openEventStream(raw.res, {
        heartbeatMs: HEARTBEAT_MS,
        maxBufferedBytes: MAX_BUFFERED_BYTES,
        redactor,
        signal,
        comment: `log of run ${params.id}`,
      });
      let batch: unknown[] = [];
      let timer: NodeJS.Timeout | undefined;
      const flush = () => {
        clearTimeout(timer);
        timer = undefined;
        if (batch.length) stream.send(batch, 'lines');
        batch = [];
      };
      const onEvent = (event: LogFollowerEvent) => {
        if (event.kind === 'end') {
          flush();
          return stream.end({ status: event.status }, 'end');
        }
        const { seq, task, agent, line } = event;
        if (!lineMatches(query, task, agent, line)) return;
        // Fields under secret-looking keys are masked here, values the stream masks as text.
        const fields = line.fields && redactor ? redactor.redact(line.fields) : line.fields;
        batch.push({ seq, task, agent, ...line, ...(fields ? { fields } : {}) });
        timer ??= setTimeout(flush, BATCH_MS);
      };
      const following =
        engine.followLog(params.id, onEvent) ??
        (summary.status === 'running' ? await remote?.followLog(params.id, onEvent) : undefined);
      if (!following) {
        // Read while it ran, ended before following began: its status now.
        const ended =
          summary.status === 'running' ? ((await engine.get(params.id, { log: false })) ?? summary) : summary;
        stream.send({ written: 0 }, 'ready');
        stream.end({ status: ended.status }, 'end');
        return STREAMED;
      }
      stream.onClose(() => {
        clearTimeout(timer);
        following.stop();
      });
      stream.send({ written: following.written }, 'ready');
      return STREAMED;
    }),
  );
}
