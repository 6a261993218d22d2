// SHA-256 of a stream of bytes on a worker thread: the stream's own thread only hands each chunk
// over, so hashing a large upload takes nothing from the server's thread (the other core does it
// while the bytes arrive).
import { Transform } from 'node:stream';
import { Worker } from 'node:worker_threads';

const THREAD = new URL('./checksum-thread.mjs', import.meta.url);
const PIECE = 1 << 20;

interface Waiting {
  resolve: (hex: string) => void;
  reject: (e: Error) => void;
}

interface Thread {
  worker: Worker;
  /** Checksums not yet given nor dropped: the thread keeps the process alive while there are any. */
  open: number;
}

let thread: Thread | null = null;
let nextId = 1;
const waiting = new Map<number, Waiting>();

function checksumThread(): Thread {
  if (thread) return thread;
  const w = new Worker(THREAD, { execArgv: [] });
  const current: Thread = { worker: w, open: 0 };
  w.on('message', (m: { id: number; hex?: string; error?: string }) => {
    const wait = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.hex) wait?.resolve(m.hex);
    else wait?.reject(new Error(m.error ?? 'no checksum'));
  });
  const gone = (e: Error) => {
    if (thread === current) thread = null;
    for (const wait of waiting.values()) wait.reject(e);
    waiting.clear();
  };
  w.on('error', gone);
  w.on('exit', (code) => gone(new Error(`the checksum thread stopped (${code})`)));
  thread = current;
  return current;
}

const opened = (t: Thread) => {
  if (t.open++ === 0) t.worker.ref();
};
const closed = (t: Thread) => {
  if (--t.open === 0) t.worker.unref();
};

export interface Checksum {
  /** Passes the bytes through, each chunk also to the thread. */
  stream: Transform;
  /** The SHA-256 (hex) of every byte that passed, once the stream has ended. */
  digest(): Promise<string>;
  /** Forgets it (the stream failed). */
  drop(): void;
}

export function sha256Checksum(): Checksum {
  const t = checksumThread();
  const w = t.worker;
  const id = nextId++;
  opened(t);
  w.postMessage({ id, op: 'start' });
  // The bytes go over in pieces of PIECE bytes, copied into a buffer that is then moved (not
  // cloned) to the thread: a message per network chunk would cost more than the hashing saves.
  let piece = new Uint8Array(PIECE);
  let filled = 0;
  const send = () => {
    const full = filled === piece.length ? piece : piece.slice(0, filled);
    w.postMessage({ id, op: 'chunk', chunk: full }, [full.buffer]);
    piece = new Uint8Array(PIECE);
    filled = 0;
  };
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, next) {
      for (let at = 0; at < chunk.length; ) {
        const n = Math.min(chunk.length - at, PIECE - filled);
        piece.set(chunk.subarray(at, at + n), filled);
        filled += n;
        at += n;
        if (filled === PIECE) send();
      }
      next(null, chunk);
    },
    flush(next) {
      if (filled) send();
      next();
    },
  });
  let given = false;
  return {
    stream,
    digest: () => {
      if (given) return Promise.reject(new Error('the checksum was given or dropped already'));
      given = true;
      return new Promise<string>((resolve, reject) => {
        if (thread !== t) return reject(new Error('the checksum thread stopped'));
        waiting.set(id, { resolve, reject });
        w.postMessage({ id, op: 'end' });
      }).finally(() => closed(t));
    },
    drop: () => {
      if (given) return;
      given = true;
      closed(t);
      w.postMessage({ id, op: 'drop' });
    },
  };
}
