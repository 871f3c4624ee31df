import { createServiceRef } from './service-ref.js';

/** Where a notification goes. */
export type NotificationChannel =
  /** Incoming webhooks of chat services: each gets the payload its service reads. */
  | { kind: 'slack' | 'mattermost' | 'discord' | 'teams'; url: string }
  /** An ntfy topic URL (`https://ntfy.sh/deploys`); the title and priority go in its headers. */
  | { kind: 'ntfy'; url: string; token?: string }
  /** Any HTTP endpoint: the message's `data` (or `{title, text}`) is POSTed as JSON. */
  | { kind: 'webhook'; url: string; headers?: Readonly<Record<string, string>> }
  /** E-mail over SMTP: `smtp://host:port`, `smtps://user:pass@host:465`. */
  | { kind: 'email'; smtpUrl: string; from: string; to: readonly string[] };

export type NotificationKind = NotificationChannel['kind'];

export interface NotificationMessage {
  /** A subject line (e-mail subject, ntfy title, bold first line in chats). */
  title?: string;
  text: string;
  /** For `webhook`: the JSON body instead of `{title, text}`. */
  data?: Readonly<Record<string, unknown>>;
  /** ntfy's priority; others ignore it. */
  priority?: 'min' | 'low' | 'default' | 'high' | 'urgent';
}

/** What a send came to: `detail` is one line for logs (`slack 200`, `e-mail sent to a@x`). */
export interface NotificationOutcome {
  ok: boolean;
  detail: string;
}

/**
 * Sends notifications: the one implementation behind the scheduler's job notices and the
 * `notifications` Lua module (the notifications plugin). `send` never raises for a failed
 * delivery: the outcome says what happened; nothing is retried.
 */
export interface Notifications {
  send(channel: NotificationChannel, message: NotificationMessage, signal?: AbortSignal): Promise<NotificationOutcome>;
}

export const NotificationsRef = createServiceRef<Notifications>({
  id: 'notifications',
  description: 'sends chat, webhook, ntfy and e-mail notifications (notifications plugin)',
});
