// A producer that pushes items from inside a callback (a transaction, say) read as an async
// generator: the producer waits in emit() until the reader asks for the next item; when the reader
// stops early, emit() throws Stopped so the producer unwinds (and its transaction ends).

export class Stopped extends Error {
  constructor() {
    super('the reader stopped');
  }
}

export async function* pull<T>(produce: (emit: (item: T) => Promise<void>) => Promise<void>): AsyncGenerator<T> {
  let stopped = false;
  let deliver!: (r: IteratorResult<T, undefined>) => void;
  let fail!: (e: unknown) => void;
  const nextSlot = () => {
    const p = new Promise<IteratorResult<T, undefined>>((res, rej) => {
      deliver = res;
      fail = rej;
    });
    p.catch(() => undefined); // a failure nobody waits for any more is not unhandled
    return p;
  };
  let slot = nextSlot();
  // The producer's wake-up for the item last handed out (null while nothing is handed out).
  let resume: ((go: boolean) => void) | null = null;
  const emit = (item: T) =>
    new Promise<void>((res, rej) => {
      if (stopped) return rej(new Stopped());
      resume = (go) => (go ? res() : rej(new Stopped()));
      deliver({ value: item, done: false });
    });
  const running = produce(emit).then(
    () => deliver({ value: undefined, done: true }),
    (e) => (e instanceof Stopped ? deliver({ value: undefined, done: true }) : fail(e)),
  );
  try {
    for (;;) {
      const r = await slot;
      if (r.done) return;
      slot = nextSlot();
      yield r.value;
      const wake = resume!;
      resume = null;
      wake(true);
    }
  } finally {
    stopped = true;
    const wake = resume as ((go: boolean) => void) | null;
    resume = null;
    wake?.(false);
    await running;
  }
}
