// package_revise: match, filter and update over a dataset dict with CKAN's JSON paths
// (a__b__0 nests into dicts and lists; list items also by id prefix).
import { Type } from '@sinclair/typebox';
import type { ActionContext } from './context.ts';
import { canReadPackage } from '../auth/authz.ts';
import { denied } from '../auth/rules.ts';
import { ValidationError } from '../errors.ts';
import { Invalid, type Validator } from '../validation/validate.ts';
import { p, type ParamValues } from '../validation/params.ts';
import { lockedPackage, packageOr404, showPackage } from './package-save.ts';

class DataError extends Error {}

type Json = any;
const joinPath = (p: (string | number)[]) => p.map(String).join('__');

function parseJsonOrString(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

function checkDict(data: Json, select: Record<string, Json>, path: (string | number)[] = []): (string | number)[][] {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return [path];
  const out: (string | number)[][] = [];
  for (const k of Object.keys(select).sort()) {
    const v = select[k];
    if (!(k in data)) out.push([...path, k]);
    else if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...checkDict(data[k], v, [...path, k]));
    else if (Array.isArray(v)) out.push(...checkList(data[k], v, [...path, k]));
    else if (data[k] !== v) out.push([...path, k]);
  }
  return out;
}

function checkList(data: Json, select: Json[], path: (string | number)[]): (string | number)[][] {
  if (!Array.isArray(data)) return [path];
  const out: (string | number)[][] = [];
  select.forEach((v, i) => {
    if (i >= data.length) out.push([...path, i]);
    else if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...checkDict(data[i], v, [...path, i]));
    else if (Array.isArray(v)) out.push(...checkList(data[i], v, [...path, i]));
    else if (data[i] !== v) out.push([...path, i]);
  });
  return out;
}

function resolveStringKey(data: Json, key: string): [Json, (string | number)[]] {
  const path: (string | number)[] = [];
  let current = data;
  for (const k of key.split('__')) {
    if (current && typeof current === 'object' && !Array.isArray(current)) {
      if (!(k in current)) throw new DataError(`Unmatched key ${joinPath([...path, k])}`);
      path.push(k);
      current = current[k];
      continue;
    }
    if (!Array.isArray(current)) throw new DataError(`Unmatched key ${joinPath([...path, k])}`);
    if (k.length >= 5) {
      const i = current.findIndex((rec) => rec && typeof rec === 'object' && typeof rec.id === 'string' && rec.id.startsWith(k));
      if (i < 0) throw new DataError(`Unmatched key ${joinPath([...path, k])}`);
      path.push(i);
      current = current[i];
      continue;
    }
    let index = /^-?\d+$/.test(k) ? Number(k) : NaN;
    if (Number.isNaN(index) || index < -current.length || index >= current.length)
      throw new DataError(`Unmatched key ${joinPath([...path, k])}`);
    if (index < 0) index += current.length;
    path.push(index);
    current = current[index];
  }
  return [current, path];
}

function checkStringKey(data: Json, key: string, value: Json): (string | number)[][] {
  const [current, path] = resolveStringKey(data, key);
  if (value && typeof value === 'object' && !Array.isArray(value)) return checkDict(current, value, path);
  if (Array.isArray(value)) return checkList(current, value, path);
  return current !== value ? [path] : [];
}

function filterGlobMatch(data: Json, globs: string[]): void {
  filterGlob(
    data,
    globs.map((p) => [p.startsWith('+'), p.replace(/^[-+]+/, '').split('__')] as [boolean, string[]]),
  );
}

function filterGlob(data: Json, globs: [boolean, string[]][]): void {
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    const protectedKeys: Record<string, Json> = {};
    const children = new Map<string, [boolean, string[]][]>();
    for (const [keep, g] of globs) {
      const head = g[0];
      if (head === '*') {
        if (keep) Object.assign(protectedKeys, data);
        else for (const k of Object.keys(data)) delete data[k];
        continue;
      }
      if (!(head in data)) continue;
      if (g.length > 1) (children.get(head) ?? children.set(head, []).get(head)!).push([keep, g.slice(1)]);
      else if (keep) protectedKeys[head] = data[head];
      else delete data[head];
    }
    Object.assign(data, protectedKeys);
    for (const [head, sub] of children) if (head in data) filterGlob(data[head], sub);
    return;
  }
  if (!Array.isArray(data)) return;
  const prot = new Set<number>();
  const removed = new Set<number>();
  const children = new Map<number, [boolean, string[]][]>();
  for (const [keep, g] of globs) {
    const head = g[0];
    if (head === '*') {
      for (let i = 0; i < data.length; i++) {
        if (keep && !removed.has(i)) prot.add(i);
        if (!keep && !prot.has(i)) removed.add(i);
      }
      continue;
    }
    let index: number;
    try {
      index = resolveStringKey(data, head)[1][0] as number;
    } catch {
      continue;
    }
    if (g.length > 1) (children.get(index) ?? children.set(index, []).get(index)!).push([keep, g.slice(1)]);
    else if (keep) {
      if (!removed.has(index)) prot.add(index);
    } else if (!prot.has(index)) removed.add(index);
  }
  for (const [i, sub] of children) if (!(removed.has(i) && !prot.has(i))) filterGlob(data[i], sub);
  const kept = data.filter((_: unknown, i: number) => !(removed.has(i) && !prot.has(i)));
  data.splice(0, data.length, ...kept);
}

function updateMergeDict(data: Json, update: Json, path: (string | number)[] = []): void {
  if (!update || typeof update !== 'object' || Array.isArray(update)) throw new DataError(`Expected dict for ${joinPath(path)}`);
  for (const [k, v] of Object.entries(update)) {
    if (!(k in data)) data[k] = v;
    else if (data[k] && typeof data[k] === 'object' && !Array.isArray(data[k])) updateMergeDict(data[k], v, [...path, k]);
    else if (Array.isArray(data[k])) updateMergeList(data[k], v, [...path, k]);
    else data[k] = v;
  }
}

function updateMergeList(data: Json[], update: Json, path: (string | number)[]): void {
  if (!Array.isArray(update)) throw new DataError(`Expected list for ${joinPath(path)}`);
  update.forEach((v, i) => {
    if (i >= data.length) data.push(v);
    else if (data[i] && typeof data[i] === 'object' && !Array.isArray(data[i])) updateMergeDict(data[i], v, [...path, i]);
    else if (Array.isArray(data[i])) updateMergeList(data[i], v, [...path, i]);
    else data[i] = v;
  });
}

function updateMergeStringKey(data: Json, key: string, value: Json): void {
  const parts = key.split('__');
  const k = parts[parts.length - 1];
  const parentKey = parts.slice(0, -1).join('__');
  const [current, path] = parentKey ? resolveStringKey(data, parentKey) : [data, [] as (string | number)[]];
  if (current && typeof current === 'object' && !Array.isArray(current)) {
    updateMergeDict(current, { [k]: value }, path);
  } else if (Array.isArray(current)) {
    if (k === 'extend') {
      if (!Array.isArray(value)) throw new DataError(`Expected list for ${parentKey}`);
      current.push(...value);
      return;
    }
    const [child, [index]] = resolveStringKey(current, k);
    if (child && typeof child === 'object' && !Array.isArray(child)) updateMergeDict(child, value, [...path, index]);
    else if (Array.isArray(child)) updateMergeList(child, value, [...path, index]);
    else current[index as number] = value;
  } else throw new DataError(`Expected list or dict for ${parentKey}`);
}

function listOrString(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  const parsed = parseJsonOrString(v);
  if (Array.isArray(parsed)) return parsed.map(String);
  if (typeof parsed === 'string')
    return parsed
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  return [String(parsed)];
}

/** The dataset package_revise works on: match's id or name (also as match__id, match__name). */
export function reviseTarget(params: Record<string, any>): string | undefined {
  const match = parseJsonOrString(params.match);
  const m = match && typeof match === 'object' ? (match as Record<string, any>) : {};
  const ref = params.match__id ?? m.id ?? params.match__name ?? m.name;
  return typeof ref === 'string' && ref ? ref : undefined;
}

/** match and update: a dict, also given as JSON text. */
const jsonDict: Validator = (v) => {
  const parsed = parseJsonOrString(v);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Invalid('Must be a JSON object');
  return parsed;
};
const dictParam = (description: string) =>
  p.custom<Record<string, Json>>(description, [jsonDict], Type.Record(Type.String(), Type.Unknown()), 'dictionary').nullable();

/** Flat keys (match__path, update__path, update__path__extend) are kept as sent. */
export const reviseParams = {
  match: dictParam('a dict with the id or name of the dataset; every value given must equal the current one (also match__path=value)'),
  filter: p.any(
    'patterns of fields to remove (-path) or protect (+path); * matches everything at a level; __ nests; list items by index or id prefix (at least 5 characters)',
    Type.Union([Type.String(), Type.Array(Type.String())]),
  ),
  update: dictParam('a dict merged into the dataset (also update__path=value and update__resources__extend=[...])'),
  include: p.any('patterns filtering the response', Type.Union([Type.String(), Type.Array(Type.String())])),
};

export async function packageRevise(ctx: ActionContext, p: ParamValues<typeof reviseParams> & Record<string, unknown>) {
  const match = p.match ?? undefined;
  const update = p.update ?? undefined;
  const ref = reviseTarget(p);
  if (!ref) throw new ValidationError({ match__id: ['Missing value'] });
  const found = await packageOr404(ctx, ref);
  if (!(await canReadPackage(ctx, found))) throw denied(ctx, `read package ${ref}`);
  // matched and revised as it is under the lock the update writes with (parallel revisions all count)
  const pkg = await lockedPackage(ctx, found);
  const orig = await showPackage(ctx, pkg);
  const unmatched: (string | number)[][] = [];
  if (match) unmatched.push(...checkDict(orig, match as Record<string, Json>));
  const flatMatch = Object.keys(p)
    .filter((k) => k.startsWith('match__'))
    .sort();
  for (const k of flatMatch) {
    try {
      unmatched.push(...checkStringKey(orig, k.slice(7), parseJsonOrString(p[k])));
    } catch (e) {
      if (e instanceof DataError) unmatched.push(k.slice(7).split('__'));
      else throw e;
    }
  }
  if (unmatched.length) throw new ValidationError({ match: unmatched.map(joinPath) });
  const revised: Record<string, any> = structuredClone(orig);
  const filter = listOrString(p.filter);
  if (filter) {
    filterGlobMatch(revised, filter);
    revised.id = orig.id;
  }
  if (update) {
    try {
      updateMergeDict(revised, update);
    } catch (e) {
      if (e instanceof DataError) throw new ValidationError({ update: [e.message] });
      throw e;
    }
  }
  const updateKeys = Object.keys(p)
    .filter((k) => k.startsWith('update__'))
    .sort((a, b) => {
      const ka = a.endsWith('extend') ? a.slice(0, -6) : a;
      const kb = b.endsWith('extend') ? b.slice(0, -6) : b;
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
  for (const k of updateKeys) {
    try {
      // a file sent under this key is attached to the resource it names
      const value = ctx.files?.[k] ? { __file: k } : parseJsonOrString(p[k]);
      updateMergeStringKey(revised, k.slice(8), value);
    } catch (e) {
      if (e instanceof DataError) throw new ValidationError({ [k]: [e.message] });
      throw e;
    }
  }
  revised.id = orig.id;
  const result: Record<string, any> = { package: await ctx.call('package_update', revised, { files: ctx.files }) };
  const include = listOrString(p.include);
  if (include) filterGlobMatch(result, include);
  return result;
}
