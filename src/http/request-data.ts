// Turns an HTTP request into an action's input dict, following CKAN's rules (first match wins):
// form body -> query string of a side-effect-free call -> JSON body -> {}.
import { isUtf8 } from 'node:buffer';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import type { UploadedFile } from '../context.ts';
import { ActionError, BadRequestError, ValidationError } from '../errors.ts';
import { sha256Checksum } from '../files/checksum.ts';
import { uploadTmpName } from '../files/storage.ts';
import { parseWithLazyArrays } from '../json/array-text.ts';
import { jsonError } from '../json/bytes.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function decodeUtf8(buf: Buffer): string {
  try {
    return utf8.decode(buf);
  } catch {
    throw new BadRequestError('Bad request - JSON Error: the request body is not valid UTF-8');
  }
}

/** JSON bodies from this size on keep an action's lazy lists as bytes (ActionDefinition.lazyLists). */
const LAZY_BODY_BYTES = 64 * 1024;

function parseJsonBody(buf: Buffer, lazyLists: readonly string[] | undefined): Pick<RequestData, 'data' | 'reread'> {
  if (lazyLists?.length && buf.length >= LAZY_BODY_BYTES) {
    if (!isUtf8(buf)) decodeUtf8(buf); // throws the error
    // Quick: a lazy list's end is guessed from the end of the body (no pass over the list here).
    const body = parseWithLazyArrays(buf, lazyLists, true);
    if (body) {
      const exact = () => parseWithLazyArrays(buf, lazyLists)?.data ?? parseJsonObject(decodeUtf8(buf));
      return { data: body.data, reread: body.guessed ? exact : undefined };
    }
  }
  return { data: parseJsonObject(decodeUtf8(buf)) };
}

export function parseJsonObject(text: string): Record<string, unknown> {
  if (/^\s*$/.test(text)) return {}; // (trim() would copy a large body)
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw jsonError(e);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new BadRequestError(
      `Bad request - JSON Error: Request data JSON decoded to ${describeJson(value)} but it needs to be a dictionary.`,
    );
  }
  return value as Record<string, unknown>;
}

/** A short text for a decoded JSON value (hostile nesting cannot overflow JSON.stringify here). */
function describeJson(value: unknown): string {
  if (!Array.isArray(value)) return JSON.stringify(value);
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    return 'a deeply nested list';
  }
  return text.length > 100 ? `${text.slice(0, 100)}...` : text;
}

/**
 * Adds a value under key; a repeated key becomes a list. Own properties only, as JSON.parse makes
 * them: a key such as __proto__ is a parameter like any other, never the object's prototype.
 */
function addValue(out: Record<string, unknown>, key: string, value: unknown): void {
  if (!Object.hasOwn(out, key)) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else if (Array.isArray(out[key])) (out[key] as unknown[]).push(value);
  else out[key] = [out[key], value];
}

/** `curl -d '{"id":"x"}'` sends the JSON as a form field name with an empty value: read it as JSON. */
function formData(fields: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(fields);
  if (keys.length === 1 && (fields[keys[0]] === '' || fields[keys[0]] === '1') && /^\s*[{[]/.test(keys[0])) {
    return parseJsonObject(keys[0]);
  }
  return fields;
}

export function queryData(rawQuery: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(rawQuery)) addValue(out, k, v);
  return out;
}

export interface RequestData {
  data: Record<string, unknown>;
  files: Record<string, UploadedFile>;
  /**
   * When the end of a lazy list was guessed: the body read without guessing. A wrong guess makes
   * the call fail (the list is malformed); the caller then compares and calls again.
   */
  reread?: () => Record<string, unknown>;
}

export interface ParseOptions {
  sideEffectFree: boolean;
  maxFileBytes: number;
  lazyLists?: readonly string[];
  tmpDir?: string;
}

/** A promise whose failure nobody may be there to see (the request failed before using it). */
function settledLater<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

export async function requestData(request: FastifyRequest, opts: ParseOptions): Promise<RequestData> {
  const rawQuery = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
  const files: Record<string, UploadedFile> = {};
  if (request.isMultipart()) {
    const fields: Record<string, unknown> = {};
    const tmpDir = opts.tmpDir ?? os.tmpdir();
    fs.mkdirSync(tmpDir, { recursive: true });
    // The file being written, until it is complete and recorded in files.
    let writing: string | undefined;
    try {
      for await (const part of request.parts({ limits: { fileSize: opts.maxFileBytes } })) {
        if (part.type === 'file') {
          const target = path.join(tmpDir, uploadTmpName());
          // Opened here, not lazily by the stream: the file then exists before any await, so the
          // catch below always finds it (a stream opening later could recreate it after the removal).
          const fd = fs.openSync(target, 'w');
          writing = target;
          // Its checksum as it is received (the loader's "has the file changed" needs it).
          const checksum = sha256Checksum();
          // At the limit the upload fails at once (the stream would otherwise wait for the part's end).
          part.file.once('limit', () =>
            part.file.destroy(Object.assign(new Error('upload too large'), { code: 'FST_REQ_FILE_TOO_LARGE' })),
          );
          try {
            await pipeline(part.file, checksum.stream, fs.createWriteStream(target, { fd, highWaterMark: 1 << 20 }));
          } catch (e) {
            checksum.drop();
            throw e;
          }
          if (part.file.truncated) {
            checksum.drop();
            throw new ValidationError({ upload: [`File upload too large: the limit is ${Math.round(opts.maxFileBytes / 1048576)} MB`] });
          }
          // A repeated file field: the last one wins, the earlier file goes.
          const earlier = files[part.fieldname];
          files[part.fieldname] = {
            fieldName: part.fieldname,
            filename: path.basename(part.filename || 'upload'),
            mimetype: part.mimetype,
            path: target,
            size: fs.statSync(target).size,
            sha256: settledLater(checksum.digest()),
          };
          writing = undefined;
          if (earlier) fs.rmSync(earlier.path, { force: true });
        } else {
          addValue(fields, part.fieldname, part.value);
        }
      }
    } catch (e) {
      if (writing) fs.rmSync(writing, { force: true });
      discardFiles(files);
      if ((e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
        throw new ValidationError({ upload: [`File upload too large: the limit is ${Math.round(opts.maxFileBytes / 1048576)} MB`] });
      }
      // The body's own fault (cut short, bad boundaries, bad headers): not a server error.
      if (e instanceof Error && !(e instanceof ActionError) && !(e as NodeJS.ErrnoException).syscall) {
        throw new BadRequestError(`Bad request - malformed multipart/form-data body: ${e.message}`);
      }
      throw e;
    }
    const data = formData(fields);
    for (const f of Object.values(files)) data[f.fieldName] = { filename: f.filename, size: f.size, mimetype: f.mimetype };
    return { data, files };
  }
  const body = request.body;
  if (body && typeof body === 'object' && !Buffer.isBuffer(body)) {
    // application/x-www-form-urlencoded, already parsed (repeated keys are lists)
    if (Object.keys(body).length) return { data: formData({ ...(body as Record<string, unknown>) }), files };
  }
  if (opts.sideEffectFree && rawQuery) {
    const q = queryData(rawQuery);
    delete q.callback;
    if (Object.keys(q).length) return { data: q, files };
  }
  if (Buffer.isBuffer(body) && body.length) return { ...parseJsonBody(body, opts.lazyLists), files };
  return { data: {}, files };
}

export function discardFiles(files: Record<string, UploadedFile>): void {
  for (const f of Object.values(files)) fs.rmSync(f.path, { force: true });
}
