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
  /** The last try's outcome; after several tries, with how many and what the earlier ones came to. */
  detail: string;
  /** How many tries it took (1 unless `attempts` allowed more and the first failed). */
  attempts: number;
}

/** Tries at most (a notification is not worth holding its sender for long). */
export const MAX_NOTIFICATION_ATTEMPTS = 5;

export interface NotificationSendOptions {
  /** Aborts the send and any wait between tries (rejects with the abort reason). */
  signal?: AbortSignal;
  /** Tries at most this many times, while a try fails (1 by default, at most MAX_NOTIFICATION_ATTEMPTS). */
  attempts?: number;
  /** The wait before the second try, doubled before each later one (1,000 ms by default). */
  backoffMs?: number;
}

/**
 * Sends notifications: the one implementation behind the scheduler's job notices and the
 * `notifications` Lua module (the notifications plugin). `send` never raises for a failed
 * delivery: the outcome says what happened. A failed try is tried again only when `attempts`
 * allows it, after a backoff that doubles.
 */
export interface Notifications {
  send(
    channel: NotificationChannel,
    message: NotificationMessage,
    options?: NotificationSendOptions,
  ): Promise<NotificationOutcome>;
}

export const NotificationsRef = createServiceRef<Notifications>({
  id: 'notifications',
  description: 'sends chat, webhook, ntfy and e-mail notifications (notifications plugin)',
});
