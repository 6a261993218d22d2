// Reading one schema or preset file named in svc.scheming.*: where it is, its parsed content, and
// the line of any part of it (for start-up messages).
import fs from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { ConfigError } from '../config/load.ts';

export type PathKey = string | number;

export interface SchemaFile {
  /** The path read, as the messages name it. */
  source: string;
  data: unknown;
  /** The line (1-based) where the value at this path starts, when known. */
  lineOf(at: PathKey[]): number | undefined;
}

/** A CKAN configuration's `ckanext.some.module:file.yaml` (module path, then a file inside it). */
const MODULE_PATH = /^([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+):(.+)$/;

/**
 * The file an entry of svc.scheming.* names. Relative paths are read from the configuration file's
 * folder, else the working directory. `module:/absolute/path` (a form CKAN configurations use) is the
 * absolute path; any other `module:file` is a file inside a CKAN extension, which svc does not have.
 */
export function resolveSchemaPath(option: string, entry: string, baseDir: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry))
    throw new ConfigError(`${option}: "${entry}" is a URL; svc reads schema files from disk: download it and give its path`);
  const mod = MODULE_PATH.exec(entry);
  if (mod) {
    if (path.isAbsolute(mod[2])) return mod[2];
    throw new ConfigError(
      `${option}: "${entry}" names a file inside the CKAN extension ${mod[1]}, which svc does not include: copy the file and give its path instead`,
    );
  }
  return path.resolve(baseDir, entry);
}

const isYamlName = (file: string) => /\.ya?ml$/i.test(file);

/**
 * YAML as ckanext-scheming reads it (PyYAML, YAML 1.1: yes/no are booleans; a repeated key takes
 * the last value, as in ckanext-scheming's own ckan_formpages_draft.yaml), except that dates stay
 * text: a schema's values go out unchanged through scheming_*_schema_show.
 */
function parseYaml(text: string, lineCounter: LineCounter): Document.Parsed {
  return parseDocument(text, {
    version: '1.1',
    lineCounter,
    uniqueKeys: false,
    customTags: (tags) => tags.filter((t) => typeof t === 'string' || t.tag !== 'tag:yaml.org,2002:timestamp'),
  });
}

/** The line and column of a character offset. */
function lineAt(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, col: before[before.length - 1].length + 1 };
}

/** Reads and parses a schema or preset file: JSON for .json, YAML for .yaml/.yml and anything else. */
export function readSchemaFile(option: string, file: string): SchemaFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a folder, not a file' : `cannot be read (${code})`;
    throw new ConfigError(`${option}: ${file}: ${why}`);
  }
  const lineCounter = new LineCounter();
  let data: unknown;
  let doc: Document.Parsed | undefined;
  if (/\.json$/i.test(file)) {
    const located = parseYaml(text, lineCounter);
    try {
      data = JSON.parse(text);
    } catch (e) {
      // Node gives the position in some messages only; the YAML parser (JSON is YAML) finds most others.
      const message = (e as Error).message;
      const pos = /position (\d+)/.exec(message);
      const where = pos ? lineAt(text, Number(pos[1])) : located.errors[0]?.linePos?.[0];
      const reason = message.replace(/ in JSON at position \d+.*$/s, '').replace(/, (\.\.\.)?".*$/s, '');
      throw new ConfigError(`${option}: ${file}${where ? ` line ${where.line}, column ${where.col}` : ''}: not valid JSON: ${reason}`);
    }
    if (!located.errors.length) doc = located;
  } else {
    doc = parseYaml(text, lineCounter);
    const err = doc.errors[0];
    if (err) {
      const at = err.linePos?.[0];
      const first = err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
      throw new ConfigError(
        `${option}: ${file}${at ? ` line ${at.line}, column ${at.col}` : ''}: not valid ${isYamlName(file) ? 'YAML' : 'YAML or JSON'}: ${first}`,
      );
    }
    data = doc.toJS({ maxAliasCount: 1000 });
  }
  return {
    source: file,
    data,
    lineOf: (at) => {
      const node = doc?.getIn(at, true) as { range?: [number, number, number] } | undefined;
      return node?.range ? lineCounter.linePos(node.range[0]).line : undefined;
    },
  };
}
