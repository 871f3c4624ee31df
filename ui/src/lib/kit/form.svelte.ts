import { ApiError } from '$lib/api/errors';

/** Whether the master's `named` field is `field` or one of its items (`emails[2]`, `vars.env`). */
function isField(named: string, field: string): boolean {
  return named === field || named.startsWith(`${field}[`) || named.startsWith(`${field}.`);
}

/**
 * A form's answer from the master: an error the master names a field of (`field: "expires"`, or an
 * item of it: `emails[2]`) is shown at that field (`at`), anything else above the form
 * (`general`). `submit` runs the call and keeps what it threw; a new submit clears it.
 */
export class FormErrors {
  error = $state<unknown>();

  constructor(private readonly fields: readonly string[]) {}

  /** The master's message for `field`, when that is the field it named. */
  at(field: string): string | undefined {
    const e = this.error;
    return e instanceof ApiError && e.field !== undefined && isField(e.field, field) ? e.message : undefined;
  }

  /** What is not shown at one of the form's fields. */
  get general(): unknown {
    const e = this.error;
    return e instanceof ApiError && e.field !== undefined && this.fields.some((f) => isField(e.field!, f))
      ? undefined
      : e;
  }

  /** Runs the form's call; true when it succeeded. */
  async submit(call: () => Promise<unknown>): Promise<boolean> {
    this.error = undefined;
    try {
      await call();
      return true;
    } catch (e) {
      this.error = e;
      return false;
    }
  }
}
