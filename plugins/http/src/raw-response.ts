import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RunnerError } from '@runner/plugin-sdk';
import { errorAnswer } from './errors.js';

/**
 * Answers on a bare socket, where no ServerResponse exists (a refused WebSocket upgrade, a
 * request Node could not parse), with the API's error body, then closes the socket.
 */
export function writeRawError(socket: Duplex, error: RunnerError, requestId: string): void {
  const { status, body } = errorAnswer(error, requestId);
  const payload = JSON.stringify(body);
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'connection: close\r\n' +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(payload)}\r\n` +
      `x-request-id: ${requestId}\r\n\r\n` +
      payload,
  );
}
