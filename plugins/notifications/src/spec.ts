import { defineLuaModule, type LuaFunctionSpec } from '@runner/plugin-sdk';

const message = { name: 'message', type: 'string|{title?: string, text: string, priority?: string}' };
const outcome = '{ok: boolean, detail: string}';

const chat = (service: string, example: string): LuaFunctionSpec => ({
  args: [{ name: 'url', type: 'string' }, message],
  result: outcome,
  description: `Posts the message to a ${service} incoming webhook URL.`,
  sideEffects: true,
  callsLua: false,
  example,
});

/** Static declaration of the `notifications` module: `runner modules info notifications` prints it. */
export const notificationsModule = defineLuaModule({
  name: 'notifications',
  description: 'Notify people: Slack, Mattermost, Discord, Teams, ntfy, any webhook, e-mail over SMTP',
  docs: `
The same implementation sends the scheduler's job notices. A message is a string, or a table with
text and an optional title (e-mail subject, ntfy title, a bold first line in chats) and priority
(ntfy). A failed delivery does not raise: ok is false and detail says why (it is logged as a
warning too); nothing is retried. HTTP requests time out after 10s. E-mail goes through
opts.smtp_url, or the notifications.smtp_url setting; from is opts.from or notifications.from.
In dry-run nothing is sent: ok = true, skipped = true and note says what would be sent where.`,
  functions: {
    slack: chat('Slack', `notifications.slack(vars.slack_hook, { title = "Deployed", text = "web 1.4.2 is live" })`),
    mattermost: chat('Mattermost', `notifications.mattermost(vars.mm_hook, "backup done")`),
    discord: chat('Discord', `notifications.discord(vars.discord_hook, "backup done")`),
    teams: chat('Microsoft Teams', `notifications.teams(vars.teams_hook, { title = "Deploy", text = "done" })`),
    ntfy: {
      args: [{ name: 'url', type: 'string' }, message, { name: 'opts', type: '{token?: string}', optional: true }],
      result: outcome,
      description:
        'Publishes the message to an ntfy topic URL (https://ntfy.sh/<topic>), with an access token if given.',
      sideEffects: true,
      callsLua: false,
      example: `notifications.ntfy("https://ntfy.sh/acme-deploys", { title = "deploy", text = "done", priority = "high" })`,
    },
    webhook: {
      args: [
        { name: 'url', type: 'string' },
        { name: 'data', type: 'table' },
        { name: 'opts', type: '{headers?: table}', optional: true },
      ],
      result: outcome,
      description: 'POSTs data as JSON to url (with the headers given).',
      sideEffects: true,
      callsLua: false,
      example: `notifications.webhook("https://hooks.example.com/deploy", { app = "web", version = vars.version })`,
    },
    email: {
      args: [
        { name: 'to', type: 'string|string[]' },
        message,
        { name: 'opts', type: '{smtp_url?: string, from?: string}', optional: true },
      ],
      result: outcome,
      description: 'Sends the message by e-mail; the title is the subject (else the first line of text).',
      sideEffects: true,
      callsLua: false,
      example: `notifications.email({ "ops@example.com" }, { title = "Backup failed", text = r.stderr })`,
    },
  },
});
