import { defineLuaModulePlugin, NotificationsRef, offerLuaModule } from '@runner/plugin-sdk';
import { notificationsModule } from './src/spec.js';

export { notificationsModule };

const CONFIG = { smtpUrl: 'notifications.smtp_url', from: 'notifications.from' } as const;

/**
 * Notifications: the one sender (NotificationsRef) the scheduler's job notices and the
 * `notifications` Lua module share. The sender (and nodemailer) load in setup.
 */
export const plugin = defineLuaModulePlugin({
  id: 'notifications',
  version: '0.1.0',
  description: 'Notifications by chat webhooks (Slack, Mattermost, Discord, Teams), ntfy, webhooks and e-mail',
  provides: [NotificationsRef],
  config: {
    [CONFIG.smtpUrl]: {
      schema: { type: 'string' },
      default: '',
      secret: true,
      help: 'SMTP server notifications.email uses by default: smtp://host:25, smtps://user:password@host:465',
    },
    [CONFIG.from]: { schema: { type: 'string' }, default: 'runner@localhost', help: 'sender of notifications.email' },
  },
  modules: [
    offerLuaModule(notificationsModule, async (_deps, ctx) => {
      const [{ NotificationSender }, { createNotificationsModule }] = await Promise.all([
        import('./src/send.js'),
        import('./src/lua.js'),
      ]);
      const sender = new NotificationSender();
      ctx.provide(NotificationsRef, sender);
      ctx.onStop(() => sender.close());
      return createNotificationsModule(sender, () => ({
        smtpUrl: ctx.config.get<string>(CONFIG.smtpUrl),
        from: ctx.config.get<string>(CONFIG.from),
      }));
    }),
  ],
});
