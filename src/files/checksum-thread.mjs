// The thread side of checksum.ts: SHA-256 of streams of bytes, by id, as their chunks arrive.
// Plain JavaScript: a thread starts without a TypeScript loader.
import { createHash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
/** @type {Map<number, import('node:crypto').Hash>} */
const hashes = new Map();

port.on('message', (/** @type {{ id: number, op: 'start' | 'chunk' | 'end' | 'drop', chunk?: Uint8Array }} */ m) => {
  if (m.op === 'start') hashes.set(m.id, createHash('sha256'));
  else if (m.op === 'chunk') hashes.get(m.id)?.update(/** @type {Uint8Array} */ (m.chunk));
  else {
    const hash = hashes.get(m.id);
    hashes.delete(m.id);
    if (m.op === 'end') port.postMessage(hash ? { id: m.id, hex: hash.digest('hex') } : { id: m.id, error: 'unknown checksum' });
  }
});
