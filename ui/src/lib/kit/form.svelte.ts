import { ApiError } from '$lib/api/errors';

/**
 * A form's answer from the master: an error the master names a field of (`field: "expires"`) is
 * shown at that field (`at`), anything else above the form (`general`). `submit` runs the call and
 * keeps what it threw; a new submit clears it.
 */
export class FormErrors {
  error = $state<unknown>();

  constructor(private readonly fields: readonly string[]) {}

  /** The master's message for `field`, when that is the field it named. */
  at(field: string): string | undefined {
    const e = this.error;
    return e instanceof ApiError && e.field === field ? e.message : undefined;
  }

  /** What is not shown at one of the form's fields. */
  get general(): unknown {
    const e = this.error;
    return e instanceof ApiError && e.field !== undefined && this.fields.includes(e.field) ? undefined : e;
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
