import {
  messageOf,
  type NotificationChannel,
  type NotificationMessage,
  type NotificationOutcome,
  type Notifications,
} from '@runner/plugin-sdk';
import type { Transporter } from 'nodemailer';

const HTTP_TIMEOUT_MS = 10_000;

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
    signal?: AbortSignal,
  ): Promise<NotificationOutcome> {
    return channel.kind === 'email' ? this.#email(channel, message) : this.#http(channel, message, signal);
  }

  async #http(
    channel: Exclude<NotificationChannel, { kind: 'email' }>,
    message: NotificationMessage,
    signal?: AbortSignal,
  ): Promise<NotificationOutcome> {
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

  async #email(
    channel: Extract<NotificationChannel, { kind: 'email' }>,
    message: NotificationMessage,
  ): Promise<NotificationOutcome> {
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
