// GET /executions/:id/log/stream on a real HTTP server (ephemeral loopback port) with a real run:
// lines arrive as written with their write position, a page read after `ready` tells which of
// them it already holds, filters apply, and the end of the run ends the stream.
import { HttpRouterRef } from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as http } from '@runner/plugin-http';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { plugin as moduleExec } from '@runner/plugin-modules-host';
import { plugin as moduleLog } from '@runner/plugin-modules-script';
import { plugin as store } from '@runner/plugin-store';
import { plugin as template } from '@runner/plugin-template';
import { plugin as workflow } from '@runner/plugin-workflow';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugin as engine } from './plugin.js';

let kernel: TestKernel;
let base: string;
beforeAll(async () => {
  kernel = await createTestKernel({
    dataDir: mkdtempSync(join(tmpdir(), 'runner-log-stream-')),
    plugins: [http, store, template, luaRuntime, moduleExec, moduleLog, workflow, engine],
    profile: 'master',
    config: { 'http.port': 0, 'http.bind_address': '127.0.0.1' },
  });
  await kernel.ready();
  base = `http://127.0.0.1:${kernel.get(HttpRouterRef).address()?.port}/api/v1`;
});
afterAll(() => kernel.stop());

interface Event {
  event: string;
  data: unknown;
}

/** Reads server-sent events until `end` (or the answer closes); `onEvent` sees each as it comes. */
async function readEvents(url: string, onEvent: (e: Event) => Promise<void> | void = () => {}): Promise<Event[]> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const events: Event[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = block.split('\n').find((l) => l.startsWith('data: '));
      if (!data) continue;
      const event =
        block
          .split('\n')
          .find((l) => l.startsWith('event: '))
          ?.slice(7) ?? 'message';
      const e = { event, data: JSON.parse(data.slice(6)) as unknown };
      events.push(e);
      await onEvent(e);
    }
  }
  return events;
}

async function start(content: string): Promise<string> {
  const response = await fetch(`${base}/workflows/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content, workflow_name: 'streamed' }),
  });
  const body = (await response.json()) as { id: string };
  expect(response.status, JSON.stringify(body)).toBe(202);
  return body.id;
}

// Two tasks writing at once: the write order interleaves them, unlike the page order.
const twoWriters = `version: "1.0"
parallel: 2
tasks:
  - name: a
    exec: { script: 'exec.run("sleep 0.3"); for i = 1, 200 do log.info("a " .. i) end; log.warn("login a 19", { password = "hunter2" }); return true' }
  - name: b
    exec: { script: 'exec.run("sleep 0.3"); for i = 1, 200 do log.info("b " .. i) end; return true' }
`;

type Line = { seq: number; task: string; message: string };

describe('the live log stream', () => {
  it('sends every line once with its write position, and a page read after ready says which it holds', async () => {
    const id = await start(twoWriters);
    let pageTotal = -1;
    const events = await readEvents(`${base}/executions/${id}/log/stream`, async (e) => {
      if (e.event !== 'ready') return;
      // What the run view does: the tail page, read after following began.
      const page = (await (await fetch(`${base}/executions/${id}/log?tail=5000`)).json()) as { total: number };
      pageTotal = page.total;
    });
    expect(events[0]).toEqual({ event: 'ready', data: { written: expect.any(Number) } });
    expect(events.at(-1)).toEqual({ event: 'end', data: { status: 'succeeded' } });
    const lines = events.filter((e) => e.event === 'lines').flatMap((e) => e.data as Line[]);
    const written = (events[0].data as { written: number }).written;
    // Consecutive positions from where following began, none twice.
    expect(lines.map((l) => l.seq)).toEqual(Array.from({ length: lines.length }, (_, i) => written + i));
    const final = (await (await fetch(`${base}/executions/${id}/log?tail=1`)).json()) as { total: number };
    expect(written + lines.length).toBe(final.total);
    // The page read after `ready` plus the streamed lines past its total are the whole log.
    expect(pageTotal).toBeGreaterThanOrEqual(written);
    expect(pageTotal + lines.filter((l) => l.seq >= pageTotal).length).toBe(final.total);
    expect(new Set(lines.map((l) => l.task))).toEqual(new Set(['a', 'b']));
    // After the run its stored log reads in the same order: each streamed line at its `seq`.
    const stored = (await (await fetch(`${base}/executions/${id}/log?tail=5000`)).json()) as {
      lines: { n: number; task: string; message: string }[];
    };
    const at = new Map(stored.lines.map((l) => [l.n, `${l.task} ${l.message}`]));
    expect(lines.map((l) => at.get(l.seq))).toEqual(lines.map((l) => `${l.task} ${l.message}`));
  });

  it('applies the task and search filters, and masks secret-looking fields', async () => {
    const id = await start(twoWriters);
    const events = await readEvents(`${base}/executions/${id}/log/stream?task=a&q=A%2019`);
    const lines = events.filter((e) => e.event === 'lines').flatMap((e) => e.data as Line[]);
    expect(lines.map((l) => l.message)).toEqual([
      'a 19',
      ...Array.from({ length: 10 }, (_, i) => `a ${190 + i}`),
      'login a 19',
    ]);
    expect(JSON.stringify(lines)).not.toContain('hunter2');
    expect(lines.at(-1)).toMatchObject({ task: 'a', fields: { password: '***' } });
  });

  it('ends at once for an ended run and answers 404 for an unknown one', async () => {
    const id = await start('version: "1.0"\ntasks:\n  - name: t\n    exec: { script: "return true" }\n');
    for (let i = 0; i < 100; i++) {
      const run = (await (await fetch(`${base}/executions/${id}?log=false`)).json()) as { status: string };
      if (run.status !== 'running') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await readEvents(`${base}/executions/${id}/log/stream`)).toEqual([
      { event: 'ready', data: { written: 0 } },
      { event: 'end', data: { status: 'succeeded' } },
    ]);
    const missing = await fetch(`${base}/executions/nope/log/stream`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain('"nope"');
  });
});
