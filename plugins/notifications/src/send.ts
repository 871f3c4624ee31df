import {
  MAX_NOTIFICATION_ATTEMPTS,
  messageOf,
  type NotificationChannel,
  type NotificationMessage,
  type NotificationOutcome,
  type NotificationSendOptions,
  type Notifications,
} from '@runner/plugin-sdk';
import type { Transporter } from 'nodemailer';
import { setTimeout as sleep } from 'node:timers/promises';

const HTTP_TIMEOUT_MS = 10_000;
const DEFAULT_BACKOFF_MS = 1_000;

/** What one try came to. */
type Try = Pick<NotificationOutcome, 'ok' | 'detail'>;

/** `*title*\ntext`, as chats show a heading. */
function chatText(message: NotificationMessage, bold: string): string {
  return message.title ? `${bold}${message.title}${bold}\n${message.text}` : message.text;
}

/** The request each HTTP channel is sent as. */
export function httpRequest(
  channel: Exclude<NotificationChannel, { kind: 'email' }>,
  message: NotificationMessage,
): { headers: Record<string, string>; body: string } {
  const json = (body: unknown, headers: Readonly<Record<string, string>> = {}) => ({
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  switch (channel.kind) {
    case 'slack':
    case 'mattermost':
      return json({ text: chatText(message, channel.kind === 'slack' ? '*' : '**') });
    case 'discord':
      // Discord refuses content over 2000 characters.
      return json({ content: chatText(message, '**').slice(0, 2000) });
    case 'teams':
      return json({
        '@type': 'MessageCard',
        '@context': 'https://schema.org/extensions',
        summary: message.title ?? message.text.slice(0, 80),
        ...(message.title ? { title: message.title } : {}),
        text: message.text,
      });
    case 'ntfy':
      return {
        headers: {
          'content-type': 'text/plain; charset=utf-8',
          ...(message.title ? { title: message.title } : {}),
          ...(message.priority ? { priority: message.priority } : {}),
          ...(channel.token ? { authorization: `Bearer ${channel.token}` } : {}),
        },
        body: message.text,
      };
    case 'webhook':
      return json(message.data ?? { title: message.title ?? null, text: message.text }, channel.headers);
  }
}

/** The notifications service: HTTP channels with fetch, e-mail with nodemailer (a transport per SMTP URL). */
export class NotificationSender implements Notifications {
  readonly #transports = new Map<string, Transporter>();

  async send(
    channel: NotificationChannel,
    message: NotificationMessage,
    options: NotificationSendOptions = {},
  ): Promise<NotificationOutcome> {
    const { signal, backoffMs = DEFAULT_BACKOFF_MS } = options;
    const attempts = Math.max(1, Math.min(MAX_NOTIFICATION_ATTEMPTS, Math.floor(options.attempts ?? 1)));
    const failed: string[] = [];
    for (let attempt = 1; ; attempt++) {
      const { ok, detail } = await this.#once(channel, message, signal);
      if (ok || attempt === attempts) {
        const before = failed.map((d, i) => `${i + 1}: ${d}`).join('; ');
        const tries = attempt === 1 ? detail : `${detail} (try ${attempt} of ${attempts}; ${before})`;
        return { ok, detail: tries, attempts: attempt };
      }
      failed.push(detail);
      await sleep(backoffMs * 2 ** (attempt - 1), undefined, { signal });
    }
  }

  #once(channel: NotificationChannel, message: NotificationMessage, signal?: AbortSignal) {
    return channel.kind === 'email' ? this.#email(channel, message) : this.#http(channel, message, signal);
  }

  async #http(
    channel: Exclude<NotificationChannel, { kind: 'email' }>,
    message: NotificationMessage,
    signal?: AbortSignal,
  ): Promise<Try> {
    const { headers, body } = httpRequest(channel, message);
    const timeout = AbortSignal.timeout(HTTP_TIMEOUT_MS);
    try {
      const response = await fetch(channel.url, {
        method: 'POST',
        headers: { 'user-agent': 'runner', ...headers },
        body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      await response.body?.cancel();
      return { ok: response.ok, detail: `${channel.kind} ${response.status}` };
    } catch (error) {
      if (signal?.aborted) throw error;
      return { ok: false, detail: `${channel.kind} failed: ${messageOf(error)}` };
    }
  }

  async #email(channel: Extract<NotificationChannel, { kind: 'email' }>, message: NotificationMessage): Promise<Try> {
    if (!channel.smtpUrl) return { ok: false, detail: 'e-mail not sent: no SMTP server is configured' };
    let transport = this.#transports.get(channel.smtpUrl);
    // Loaded at the first e-mail: nodemailer cost every master start 12% of its CPU.
    if (!transport) {
      const { createTransport } = await import('nodemailer');
      this.#transports.set(channel.smtpUrl, (transport = createTransport(channel.smtpUrl)));
    }
    try {
      await transport.sendMail({
        from: channel.from,
        to: [...channel.to],
        subject: message.title ?? message.text.split('\n')[0],
        text: message.text,
      });
      return { ok: true, detail: `e-mail sent to ${channel.to.join(', ')}` };
    } catch (error) {
      return { ok: false, detail: `e-mail failed: ${messageOf(error)}` };
    }
  }

  close(): void {
    for (const transport of this.#transports.values()) transport.close();
    this.#transports.clear();
  }
}
