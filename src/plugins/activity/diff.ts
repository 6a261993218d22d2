// Text diffs of two versions of an object (activity_diff): unified, context or an HTML table.
import { structuredPatch } from 'diff';

export const DIFF_TYPES = ['unified', 'context', 'html'] as const;
export type DiffType = (typeof DIFF_TYPES)[number];

/** JSON with sorted keys and two-space indent, so equal objects give equal text. */
export function stableJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object')
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
      );
    return v;
  };
  return JSON.stringify(sort(value), null, 2);
}

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

export function diffObjects(before: unknown, after: unknown, type: DiffType): string {
  const patch = structuredPatch('', '', stableJson(before) + '\n', stableJson(after) + '\n', '', '', { context: 3 });
  if (!patch.hunks.length) return type === 'html' ? '<table class="diff"></table>' : '';
  if (type === 'unified') {
    const out = ['--- ', '+++ '];
    for (const h of patch.hunks) out.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, ...h.lines);
    return out.join('\n');
  }
  if (type === 'context') {
    const out = ['*** ', '--- '];
    for (const h of patch.hunks) {
      out.push('***************', `*** ${h.oldStart},${h.oldStart + h.oldLines - 1} ****`);
      out.push(...h.lines.filter((l) => l[0] !== '+').map((l) => (l[0] === '-' ? '- ' : '  ') + l.slice(1)));
      out.push(`--- ${h.newStart},${h.newStart + h.newLines - 1} ----`);
      out.push(...h.lines.filter((l) => l[0] !== '-').map((l) => (l[0] === '+' ? '+ ' : '  ') + l.slice(1)));
    }
    return out.join('\n');
  }
  const rows: string[] = [];
  for (const h of patch.hunks) {
    let oldNo = h.oldStart;
    let newNo = h.newStart;
    for (const l of h.lines) {
      const text = escapeHtml(l.slice(1));
      if (l[0] === '-') rows.push(`<tr class="diff_sub"><td>${oldNo++}</td><td>${text}</td><td></td><td></td></tr>`);
      else if (l[0] === '+') rows.push(`<tr class="diff_add"><td></td><td></td><td>${newNo++}</td><td>${text}</td></tr>`);
      else rows.push(`<tr><td>${oldNo++}</td><td>${text}</td><td>${newNo++}</td><td>${text}</td></tr>`);
    }
  }
  return `<table class="diff">${rows.join('')}</table>`;
}
