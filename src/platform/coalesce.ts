/**
 * Coalesces calls made close together into one call of `run` with all their inputs — a
 * DataLoader for writes as well as reads. Many concurrent jobs each doing one small query
 * become one query per batch: fewer round trips, fewer commits.
 *
 * A batch is run when it reaches `maxBatch` inputs, or `windowMs` after its first input (0: on
 * the next turn of the event loop). `run` returns one output per input, in the same order; if it
 * throws, every call in that batch rejects with the error.
 */
export class Coalescer<I, O> {
  private pending: { input: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | NodeJS.Immediate | undefined;

  constructor(
    private readonly run: (inputs: I[]) => Promise<O[]>,
    private readonly options: { maxBatch?: number; windowMs?: number } = {},
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length >= (this.options.maxBatch ?? 100)) this.flush();
      else if (!this.timer) {
        const windowMs = this.options.windowMs ?? 0;
        this.timer = windowMs > 0 ? setTimeout(() => this.flush(), windowMs) : setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer as NodeJS.Timeout);
      clearImmediate(this.timer as NodeJS.Immediate);
      this.timer = undefined;
    }
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    Promise.resolve()
      .then(() => this.run(batch.map((b) => b.input)))
      .then(
        (outputs) => batch.forEach((b, i) => b.resolve(outputs[i] as O)),
        (error) => batch.forEach((b) => b.reject(error)),
      );
  }
}
