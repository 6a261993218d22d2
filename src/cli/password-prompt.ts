// Reads a new password for `svc user setpass`: typed twice, unseen, on a terminal; the first line
// of standard input when it is a pipe (`echo "$PW" | svc user setpass NAME`).
import { CliError, type CliIo } from './extensions.ts';

export async function readNewPassword(io: CliIo): Promise<string> {
  const input = io.stdin;
  if (typeof input === 'string') return firstLine(input);
  if (!input.isTTY) return firstLine(await readAll(input));
  const first = await askHidden(input, io, 'Password: ');
  const second = await askHidden(input, io, 'Confirm password: ');
  if (first !== second) throw new CliError('the passwords do not match');
  return first;
}

function firstLine(text: string): string {
  const line = text.split(/\r?\n/)[0];
  if (!line) throw new CliError('no password on standard input (give --password, or type it on a terminal)');
  return line;
}

async function readAll(stream: NodeJS.ReadStream): Promise<string> {
  let text = '';
  stream.setEncoding('utf8');
  for await (const chunk of stream) text += chunk;
  return text;
}

/** Asks on the terminal without echoing what is typed. */
function askHidden(input: NodeJS.ReadStream, io: CliIo, prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    io.err(prompt);
    let typed = '';
    input.setRawMode(true);
    input.setEncoding('utf8');
    input.resume();
    const done = (fn: () => void) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      io.err('\n');
      fn();
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done(() => resolve(typed));
        if (ch === '\u0003') return done(() => reject(new CliError('interrupted')));
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else typed += ch;
      }
    };
    input.on('data', onData);
  });
}
