// The client of bench datastore's loads, in a worker thread of its own: its heap holds only the
// request bodies. In the bench's main thread, which keeps the million generated rows, every
// collection the responses' buffers set off marked those rows: 55-80 ms of CPU per 10,000-row
// batch, taken from the app server and the database on a 2-core machine.
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { port, token, concurrency } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** POSTs a datastore_upsert body as given; the answer is read as bytes (not decoded). */
function post(body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/3/action/datastore_upsert',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length, authorization: token },
      },
      (res) => {
        // The envelope starts {"help": ..., "success": true, ...}: a failure shows in its first bytes.
        let head = Buffer.alloc(0);
        res.on('data', (c) => {
          if (head.length < 500) head = Buffer.concat([head, c]);
        });
        res.on('end', () => {
          if (res.statusCode !== 200 || !head.subarray(0, 300).includes('"success":true'))
            reject(new Error(`datastore_upsert: ${res.statusCode} ${head.subarray(0, 500)}`));
          else resolve();
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

let bodies = [];
// {bodies}: kept, answered 'ready'; 'go': sent, `concurrency` at a time, answered 'done' (or the error).
parentPort.on('message', (m) => {
  if (m !== 'go') {
    bodies = m.bodies;
    parentPort.postMessage('ready');
    return;
  }
  let next = 0;
  Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) await post(bodies[next++]);
    }),
  ).then(
    () => parentPort.postMessage('done'),
    (e) => parentPort.postMessage({ error: e.message }),
  );
});
