// What this process's background work has got through, since it started: the loader's rows,
// bytes and seconds. Counted here by the work itself and read by /metrics (a server's, or a
// worker's with `svc jobs worker --metrics-port`); Prometheus' rate() makes rows/s and bytes/s.
export const loaderTotals = { loads: 0, rows: 0, bytes: 0, seconds: 0 };

/** One finished load into the data store: rows, bytes of the file, and the time it took. */
export function countLoad(rows: number, bytes: number, seconds: number): void {
  loaderTotals.loads++;
  loaderTotals.rows += rows;
  loaderTotals.bytes += bytes;
  loaderTotals.seconds += seconds;
}
