import { messageOf } from '@runner/plugin-sdk';
import type { Transporter } from 'nodemailer';
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

const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * Sends a job's notifications (webhook and e-mail) and says in one line what each came to; a
 * channel that fails does not stop the other. Nothing is retried: the line is kept with the slot.
 */
export class Notifier {
  private transport?: Transporter;
  constructor(private readonly mail: MailSettings) {}

  async send(job: Job, notice: Notice): Promise<string> {
    const said: string[] = [];
    if (job.notify_webhook) said.push(await this.webhook(job.notify_webhook, notice));
    if (job.notify_email.length > 0) said.push(await this.email(job.notify_email, notice));
    return said.join('; ');
  }

  private async webhook(url: string, notice: Notice): Promise<string> {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'runner-scheduler' },
        body: JSON.stringify({ type: 'scheduler.run', ...notice }),
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      });
      await response.body?.cancel();
      return `webhook ${response.status}`;
    } catch (error) {
      return `webhook failed: ${messageOf(error)}`;
    }
  }

  private async email(to: string[], notice: Notice): Promise<string> {
    if (!this.mail.url) return 'e-mail not sent: scheduler.smtp_url is not set';
    // Loaded at the first e-mail: nodemailer cost every master start 12% of its CPU.
    this.transport ??= (await import('nodemailer')).createTransport(this.mail.url);
    const what = notice.failure ? 'failed' : 'succeeded';
    try {
      await this.transport.sendMail({
        from: this.mail.from,
        to,
        subject: `[runner] scheduled job ${notice.job} ${what} (${notice.status})`,
        text: [
          `Job:     ${notice.job}`,
          `Slot:    ${notice.slot_at}`,
          `Outcome: ${notice.outcome}`,
          `Status:  ${notice.status}`,
          ...(notice.run_id ? [`Run:     ${notice.run_id}`] : []),
          ...(notice.detail ? [`Detail:  ${notice.detail}`] : []),
        ].join('\n'),
      });
      return `e-mail sent to ${to.join(', ')}`;
    } catch (error) {
      return `e-mail failed: ${messageOf(error)}`;
    }
  }

  close(): void {
    this.transport?.close();
  }
}
