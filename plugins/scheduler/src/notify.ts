import type { NotificationSendOptions, Notifications } from '@runner/plugin-sdk';
import type { Job, Slot } from './job-store.js';

/** What a notification says: the job, the slot and what came of it. */
export interface Notice {
  job: string;
  slot_at: string;
  outcome: Slot['outcome'];
  run_id: string | null;
  /** The run's final status, or `failed_to_start`. */
  status: string;
  detail: string | null;
  /** Whether it counts as a failure (a run that did not succeed, or one that never started). */
  failure: boolean;
}

export interface MailSettings {
  /** `smtp://host:port` or `smtps://user:pass@host:465`; empty: e-mail is not configured. */
  url: string;
  from: string;
}

/** Whether a job notified on `on` is told of this notice. */
export function wants(on: Job['notify_on'], failure: boolean): boolean {
  return on === 'both' || (on === 'failure' && failure) || (on === 'success' && !failure);
}

/** How a failed notification is tried again: 3 tries, 1 s then 2 s apart (a receiver restarting). */
export const NOTIFY_RETRY = { attempts: 3, backoffMs: 1_000 };

/**
 * Sends a job's notifications (webhook and e-mail, side by side) through the notifications
 * service, each tried again while it fails (`retry`), and says in one line what each came to,
 * with its tries; a channel that fails does not hold up the other. The line is kept with the
 * slot. `signal` (the scheduler's stop) ends the waits between tries.
 */
export class Notifier {
  constructor(
    private readonly mail: MailSettings,
    private readonly sender: Notifications,
    private readonly retry: { attempts: number; backoffMs: number } = NOTIFY_RETRY,
  ) {}

  async send(job: Job, notice: Notice, signal?: AbortSignal): Promise<string> {
    const options = { ...this.retry, ...(signal ? { signal } : {}) };
    const said = await Promise.all([
      job.notify_webhook ? this.webhook(job.notify_webhook, notice, options) : undefined,
      job.notify_email.length > 0 ? this.email(job.notify_email, notice, options) : undefined,
    ]);
    return said.filter((line) => line !== undefined).join('; ');
  }

  private async webhook(url: string, notice: Notice, options: NotificationSendOptions): Promise<string> {
    const outcome = await this.sender.send(
      { kind: 'webhook', url, headers: { 'user-agent': 'runner-scheduler' } },
      { text: `scheduled job ${notice.job}: ${notice.status}`, data: { type: 'scheduler.run', ...notice } },
      options,
    );
    return outcome.detail;
  }

  private async email(to: string[], notice: Notice, options: NotificationSendOptions): Promise<string> {
    if (!this.mail.url) return 'e-mail not sent: scheduler.smtp_url is not set';
    const what = notice.failure ? 'failed' : 'succeeded';
    const outcome = await this.sender.send(
      { kind: 'email', smtpUrl: this.mail.url, from: this.mail.from, to },
      {
        title: `[runner] scheduled job ${notice.job} ${what} (${notice.status})`,
        text: [
          `Job:     ${notice.job}`,
          `Slot:    ${notice.slot_at}`,
          `Outcome: ${notice.outcome}`,
          `Status:  ${notice.status}`,
          ...(notice.run_id ? [`Run:     ${notice.run_id}`] : []),
          ...(notice.detail ? [`Detail:  ${notice.detail}`] : []),
        ].join('\n'),
      },
      options,
    );
    return outcome.detail;
  }
}
