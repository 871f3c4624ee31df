/**
 * Calls made in one turn of the event loop, carried out together: `add` queues an input and
 * resolves with its own output once `flush` handled the whole batch. The batch goes at
 * `setImmediate` (after the turn's other callers had their say) or at `max` inputs, whichever
 * comes first. For store writes: the embedded store pays for a statement and a journal record
 * per write and PostgreSQL a round trip, where a row among others costs a fraction of that.
 *
 * `flush` gets the inputs in the order they were added and answers one output per input, in that
 * order (or nothing, for a batch of writes that answer nothing); when it rejects, every call of the batch rejects with its error.
 */
export class TurnBatch<In, Out> {
  #inputs: In[] = [];
  #waiters: { resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  #scheduled = false;

  constructor(
    private readonly flush: (inputs: In[]) => Promise<readonly Out[] | void>,
    private readonly max = 500,
  ) {}

  add(input: In): Promise<Out> {
    const done = new Promise<Out>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    this.#inputs.push(input);
    if (this.#inputs.length >= this.max) this.#send();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#send());
    }
    return done;
  }

  #send(): void {
    this.#scheduled = false;
    if (this.#inputs.length === 0) return;
    const inputs = this.#inputs;
    const waiters = this.#waiters;
    this.#inputs = [];
    this.#waiters = [];
    let flushed: Promise<readonly Out[] | void>;
    try {
      flushed = this.flush(inputs);
    } catch (error) {
      flushed = Promise.reject(error);
    }
    flushed.then(
      (outputs) => waiters.forEach((w, i) => w.resolve((outputs ?? [])[i] as Out)),
      (error: unknown) => waiters.forEach((w) => w.reject(error)),
    );
  }
}
