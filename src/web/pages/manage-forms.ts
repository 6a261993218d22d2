// Helpers of the catalog management forms: reading form fields, turning an action's
// ValidationError into messages per field, and the "catalog management" pages' registration.
import fs from 'node:fs';
import type { WebContext } from '../router.ts';
import { ValidationError } from '../../errors.ts';

export type FieldMessages = Record<string, string[]>;

/** A form field as text ('' when missing; the first value when repeated). */
export function field(form: Record<string, unknown>, name: string): string {
  const v = form[name];
  if (Array.isArray(v)) return v.length ? String(v[0]) : '';
  return v === undefined || v === null ? '' : String(v);
}

/** Messages of one error entry: strings, lists, and nested dicts or lists of dicts (extras, resources). */
function messagesOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(messagesOf);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => messagesOf(v).map((m) => `${k}: ${m}`));
  return [];
}

/** An action's ValidationError as field -> messages (the form shows them next to the fields). */
export function fieldMessages(e: ValidationError): FieldMessages {
  const out: FieldMessages = {};
  for (const [k, v] of Object.entries(e.errors)) {
    if (k === '__type') continue;
    const list = messagesOf(v);
    if (list.length) out[k] = list;
  }
  if (!Object.keys(out).length) out.message = [e.message];
  return out;
}

/** Runs a form's action; a ValidationError becomes the field messages (other errors go on to the error page). */
export async function attempt<T>(run: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; errors: FieldMessages }> {
  try {
    return { ok: true, value: await run() };
  } catch (e) {
    if (e instanceof ValidationError) return { ok: false, errors: fieldMessages(e) };
    throw e;
  }
}

/** Messages for fields the form does not show (they go in the summary at the top). */
export function otherMessages(errors: FieldMessages, shown: readonly string[]): string[] {
  return Object.entries(errors)
    .filter(([k]) => !shown.includes(k))
    .flatMap(([k, list]) => list.map((m) => (k === 'message' ? m : `${k}: ${m}`)));
}

/**
 * The uploaded file of a form field, or undefined. A browser sends an empty part for a file input
 * left empty: that one is removed (the action must not see it as an upload).
 */
export function uploadedFile(ctx: WebContext, name: string) {
  const file = ctx.files[name];
  if (!file) return undefined;
  if (file.size === 0) {
    fs.rmSync(file.path, { force: true });
    delete ctx.files[name];
    return undefined;
  }
  return file;
}

export const enc = encodeURIComponent;

/** The 403 page (for pages whose action would be refused before anything is shown). */
export function forbidden(ctx: WebContext) {
  if (!ctx.user && ctx.request.method === 'GET') return ctx.redirect(`/user/login?came_from=${enc(ctx.request.url)}`);
  return ctx.render('errors/error.njk', { status: 403, title: ctx.t('error.403.title'), message: ctx.t('error.403.text') }, 403);
}
