// Reading a dataset dict the way every linked-data output needs it: a DCAT field is either a
// top-level key (the scheming shape, ckanext-dcat's dcat_ap_full.yaml names) or a legacy extra
// (ckanext-dcat's mapping.md "extras" names), and a list may be stored as a list, a JSON array
// text or comma-separated text.

export type Dict = Record<string, any>;

const present = (v: unknown) => v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0);

// The extras of each dict by key, made on the first lookup: a dataset's output reads some forty fields.
const extrasByKey = new WeakMap<Dict, Map<string, unknown>>();

function extraOf(pkg: Dict, key: string): unknown {
  let extras = extrasByKey.get(pkg);
  if (!extras) {
    extras = new Map();
    for (const e of pkg.extras as Dict[]) if (e && typeof e.key === 'string' && !extras.has(e.key)) extras.set(e.key, e.value);
    extrasByKey.set(pkg, extras);
  }
  return extras.get(key);
}

/** The value of a field: the top-level key, else the extra of that name. */
export function fieldValue(pkg: Dict, key: string): unknown {
  if (present(pkg[key])) return pkg[key];
  if (Array.isArray(pkg.extras)) {
    const value = extraOf(pkg, key);
    if (present(value)) return value;
  }
  return undefined;
}

/** A text value (a multilingual {lang: text} value gives its first text); blank is undefined. */
export function textOf(value: unknown): string | undefined {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return value.trim() || undefined;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const v of Object.values(value)) {
      const text = textOf(v);
      if (text) return text;
    }
  }
  return undefined;
}

/** The text of a field (top-level or extra). */
export function fieldText(pkg: Dict, key: string): string | undefined {
  return textOf(fieldValue(pkg, key));
}

/** A list value: a list, a JSON array text, or comma-separated text. */
export function listOf(value: unknown): unknown[] {
  if (!present(value)) return [];
  if (Array.isArray(value)) return value.filter(present);
  if (typeof value === 'string') {
    const s = value.trim();
    if (s.startsWith('[')) {
      try {
        const parsed = JSON.parse(s);
        if (Array.isArray(parsed)) return parsed.filter(present);
      } catch {
        /* not JSON: read as text */
      }
    }
    return s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  }
  return [value];
}

/** A list of objects (repeating subfields): a list, or its JSON text; a plain text is one object holding it as `text`. */
export function objectsOf(value: unknown, textKey = 'text'): Dict[] {
  let v = value;
  if (typeof v === 'string') {
    const s = v.trim();
    if (!s) return [];
    try {
      v = JSON.parse(s);
    } catch {
      return [{ [textKey]: s }];
    }
  }
  if (Array.isArray(v)) return v.filter((x): x is Dict => !!x && typeof x === 'object' && !Array.isArray(x));
  if (v && typeof v === 'object') return [v as Dict];
  return [];
}

/** True for an absolute http(s) address. */
export function isHttpUrl(value: unknown): value is string {
  return typeof value === 'string' && /^https?:\/\/[^\s<>"]+$/i.test(value.trim());
}

/** A stored UTC time ('2024-01-02T03:04:05.6') as ISO 8601 with its zone; other values as given. */
export function isoUtc(value: unknown): string | undefined {
  const text = textOf(value);
  if (!text) return undefined;
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(text)) return `${text}Z`;
  return text;
}
