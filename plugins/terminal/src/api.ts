// The REST routes of the terminal, declared without handlers (OpenAPI, UI client, CLI); the socket
// of a session is a WebSocket route (plugin.ts).
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';

const tags = ['terminal'];

export const SessionSchema = Type.Object({
  id: Type.String(),
  target: Type.String({ description: 'agent:<name> or ssh:<profile>' }),
  user: Type.String({ description: 'who opened it (only they may attach)' }),
  rows: Type.Integer(),
  cols: Type.Integer(),
  status: Type.Union([Type.Literal('open'), Type.Literal('closed')]),
  exit_code: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  created_at: Type.String(),
  attached: Type.Integer({ description: 'sockets attached now' }),
});

const SessionParams = Type.Object({ id: Type.String({ minLength: 1 }) });

export const getTerminalSessions = declareRoute({
  method: 'GET',
  path: '/terminal/sessions',
  summary: "the caller's open terminal sessions (to reattach after a reload)",
  tags,
  permission: Permissions.terminalOpen,
  responses: { 200: Type.Object({ sessions: Type.Array(SessionSchema) }) },
});

export const postTerminalSessions = declareRoute({
  method: 'POST',
  path: '/terminal/sessions',
  summary: "open a shell on an agent's host or through an SSH profile; attach to /terminal/sessions/:id/socket",
  tags,
  permission: Permissions.terminalOpen,
  body: Type.Object(
    {
      target: Type.String({ minLength: 1, description: 'an agent name, agent:<name> or ssh:<profile>' }),
      rows: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
      cols: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    },
    { additionalProperties: false },
  ),
  responses: { 201: SessionSchema },
});

export const getTerminalSessionsId = declareRoute({
  method: 'GET',
  path: '/terminal/sessions/:id',
  summary: 'one of the caller’s terminal sessions',
  tags,
  permission: Permissions.terminalOpen,
  params: SessionParams,
  responses: { 200: SessionSchema },
});

export const deleteTerminalSessionsId = declareRoute({
  method: 'DELETE',
  path: '/terminal/sessions/:id',
  summary: 'close a terminal session (its shell is hung up on)',
  tags,
  permission: Permissions.terminalOpen,
  params: SessionParams,
  responses: { 204: { description: 'closed' } },
});

export const postTerminalSessionsIdUpload = declareRoute({
  method: 'POST',
  path: '/terminal/sessions/:id/upload',
  summary: 'write a file on the remote host of a session (as its user; at most 8 MiB)',
  tags,
  permission: Permissions.terminalOpen,
  params: SessionParams,
  body: Type.Object(
    {
      path: Type.String({ minLength: 2, description: 'absolute path on the remote host' }),
      content_base64: Type.String({ description: 'the file, base64' }),
    },
    { additionalProperties: false },
  ),
  responses: { 200: Type.Object({ path: Type.String(), bytes: Type.Integer() }) },
});

export const getTerminalSessionsIdDownload = declareRoute({
  method: 'GET',
  path: '/terminal/sessions/:id/download',
  summary: 'read a file on the remote host of a session (at most 8 MiB)',
  tags,
  permission: Permissions.terminalOpen,
  params: SessionParams,
  query: Type.Object(
    { path: Type.String({ minLength: 2, description: 'absolute path on the remote host' }) },
    {
      additionalProperties: false,
    },
  ),
  responses: {
    200: Type.Object({ path: Type.String(), bytes: Type.Integer(), content_base64: Type.String() }),
  },
});

export const routes = [
  getTerminalSessions,
  postTerminalSessions,
  getTerminalSessionsId,
  deleteTerminalSessionsId,
  postTerminalSessionsIdUpload,
  getTerminalSessionsIdDownload,
];
