import {
  isLuaTable,
  luaType,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
  type NotificationChannel,
  type NotificationMessage,
  type Notifications,
} from '@runner/plugin-sdk';
import type { notificationsModule } from './spec.js';

type Fn = keyof typeof notificationsModule.functions;

export interface MailDefaults {
  smtpUrl: string;
  from: string;
}

function text(fn: string, value: unknown, position: number): string {
  if (typeof value !== 'string' || value === '')
    throw new Error(`notifications.${fn}: argument ${position} must be a non-empty string, got ${luaType(value)}`);
  return value;
}

function table(fn: string, value: unknown, position: number): Record<string, LuaValue> {
  if (value === undefined || value === null) return {};
  if (!isLuaTable(value) || (Array.isArray(value) && value.length > 0))
    throw new Error(`notifications.${fn}: argument ${position} must be a table, got ${luaType(value)}`);
  return Array.isArray(value) ? {} : (value as Record<string, LuaValue>);
}

const PRIORITIES = ['min', 'low', 'default', 'high', 'urgent'] as const;

export function parseMessage(fn: string, value: LuaValue): NotificationMessage {
  if (typeof value === 'string') return { text: text(fn, value, 2) };
  const t = table(fn, value, 2);
  const priority = t.priority as NotificationMessage['priority'];
  if (priority !== undefined && !PRIORITIES.includes(priority))
    throw new Error(`notifications.${fn}: priority must be one of ${PRIORITIES.join(', ')}`);
  return {
    text: text(fn, t.text, 2),
    ...(t.title !== undefined ? { title: String(t.title) } : {}),
    ...(priority ? { priority } : {}),
  };
}

function where(channel: NotificationChannel): string {
  if (channel.kind === 'email') return `e-mail to ${channel.to.join(', ')}`;
  // The URL of a chat webhook is its secret: only its host is shown.
  return `${channel.kind} at ${new URL(channel.url).host}`;
}

export function createNotificationsModule(
  sender: Notifications,
  mail: () => MailDefaults,
): LuaModuleImplementation<Fn> {
  async function deliver(call: LuaCallContext, channel: NotificationChannel, message: NotificationMessage) {
    if (call.dryRun) return { ok: true, skipped: true, note: `dry-run: would notify ${where(channel)}` };
    const outcome = await sender.send(channel, message, { signal: call.signal });
    if (!outcome.ok) call.logger.warn(`notification not delivered: ${outcome.detail}`);
    return { ok: outcome.ok, detail: outcome.detail };
  }
  const url = (fn: string, value: LuaValue): string => {
    const u = text(fn, value, 1);
    if (!/^https?:\/\//.test(u)) throw new Error(`notifications.${fn}: argument 1 must be an http(s) URL`);
    return u;
  };
  const chat =
    (kind: 'slack' | 'mattermost' | 'discord' | 'teams') => async (call: LuaCallContext, u: LuaValue, m: LuaValue) =>
      deliver(call, { kind, url: url(kind, u) }, parseMessage(kind, m));
  return {
    slack: chat('slack'),
    mattermost: chat('mattermost'),
    discord: chat('discord'),
    teams: chat('teams'),
    ntfy: async (call, u, m, o) => {
      const token = table('ntfy', o, 3).token;
      return deliver(
        call,
        { kind: 'ntfy', url: url('ntfy', u), ...(typeof token === 'string' ? { token } : {}) },
        parseMessage('ntfy', m),
      );
    },
    webhook: async (call, u, data, o) => {
      const headers = table('webhook', table('webhook', o, 3).headers, 3) as Record<string, string>;
      return deliver(
        call,
        { kind: 'webhook', url: url('webhook', u), headers },
        { text: '', data: table('webhook', data, 2) },
      );
    },
    email: async (call, to, m, o) => {
      const opts = table('email', o, 3);
      const recipients = typeof to === 'string' ? [to] : Array.isArray(to) ? to.map((x) => text('email', x, 1)) : [];
      if (recipients.length === 0)
        throw new Error('notifications.email: argument 1 must be an address or a list of them');
      const defaults = mail();
      const smtpUrl = typeof opts.smtp_url === 'string' ? opts.smtp_url : defaults.smtpUrl;
      const from = typeof opts.from === 'string' ? opts.from : defaults.from;
      return deliver(call, { kind: 'email', smtpUrl, from, to: recipients }, parseMessage('email', m));
    },
  };
}
