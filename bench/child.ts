// What the benchmarks share about the server they start as a child process.
import type { ChildProcess } from 'node:child_process';

/** Stops a child server: SIGTERM, then SIGKILL when it has not exited within 15 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([done, new Promise((r) => setTimeout(r, 15000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** Calls an action on the child server; throws with the error when it fails. */
export async function api(port: number, token: string, action: string, body: unknown): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${port}/api/3/action/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: token },
    body: JSON.stringify(body),
  });
  const json: any = await res.json();
  if (!json.success) throw new Error(`${action}: ${JSON.stringify(json.error)}`);
  return json.result;
}
