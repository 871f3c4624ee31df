import { Permissions, reply, serve, type HttpRouter } from '@runner/plugin-sdk';
import * as api from './api.js';
import type { TerminalSessions } from './sessions.js';

/** `/api/v1/terminal/sessions` and each session's socket. */
export function registerTerminalRoutes(router: HttpRouter, sessions: TerminalSessions): void {
  router.add(serve(api.getTerminalSessions, ({ principal }) => ({ sessions: sessions.list(principal) })));
  router.add(
    serve(api.postTerminalSessions, async ({ principal, body }) =>
      reply(201, await sessions.open(principal, body.target, { rows: body.rows, cols: body.cols })),
    ),
  );
  router.add(serve(api.getTerminalSessionsId, ({ principal, params }) => sessions.get(params.id, principal)));
  router.add(
    serve(api.deleteTerminalSessionsId, ({ principal, params }) => {
      sessions.closeById(params.id, principal);
      return undefined;
    }),
  );
  router.add(
    serve(api.postTerminalSessionsIdUpload, async ({ principal, params, body }) => ({
      path: body.path,
      bytes: await sessions.upload(params.id, principal, body.path, Buffer.from(body.content_base64, 'base64')),
    })),
  );
  router.add(
    serve(api.getTerminalSessionsIdDownload, async ({ principal, params, query }) => {
      const data = await sessions.download(params.id, principal, query.path);
      return { path: query.path, bytes: data.length, content_base64: data.toString('base64') };
    }),
  );
  router.webSocket({
    path: '/terminal/sessions/:id/socket',
    summary: "a terminal session's keystrokes (binary frames) and output; text frames resize",
    permission: Permissions.terminalOpen,
    maxMessageBytes: 64 * 1024,
    open: (channel, { params, principal }) => sessions.attach(params.id, principal, channel),
  });
}
