// datastore_create: DDL of a data store table (columns, data dictionary, primary key, indexes,
// triggers, aliases) inside the caller's write transaction. Type names come from the validated
// parser (types.ts) or the catalog; every identifier is quoted.
import { quoteIdent as qi, quoteLiteral } from '../db/sql.ts';
import { ValidationError } from '../errors.ts';
import type { CreateInput, CreateResult } from './backend.ts';
import { aliasesOf, COUNTS_TABLE, lockTableName, readTable, validType } from './catalog.ts';
import { isDbError, isRace, uniqueError } from './db-errors.ts';
import { FTS_COLUMN, lockTableComment, setUpFullText, storedLanguage, unfillAll, userTriggerSql } from './fts.ts';
import { checkRecordObjects } from './records.ts';
import type { WriteSession } from './sessions.ts';
import { guessType, parseTypeName } from './types.ts';
import { insertRecords, recount } from './write.ts';

/** datastore_create: the table, its fields, keys, indexes, triggers and aliases, then its records. */
export async function createTable(s: WriteSession, input: CreateInput): Promise<CreateResult> {
  await lockTableName(s, input.resource_id);
  await s.schemaChanged();
  let t = await readTable(s, input.resource_id);
  if (t && t.relkind !== 'r') throw new ValidationError({ resource_id: [`"${input.resource_id}" is an alias, not a resource`] });
  const records = input.records ?? [];
  checkRecordObjects(records);
  const existing = new Set((t?.columns ?? []).map((c) => c.id));
  // Types of new fields: declared, else guessed from the first record.
  const first = records[0] ?? {};
  const sent = (input.fields ?? []).map((f) => ({ ...f }));
  const sentIds = new Set(sent.map((f) => f.id));
  const typeErrors: string[] = [];
  for (const f of sent) {
    if (f.type === undefined || f.type === null || f.type === '') {
      if (existing.has(f.id)) continue;
      if (!(f.id in first)) {
        typeErrors.push(`"${f.id}" type not guessable`);
        continue;
      }
      f.type = guessType(first[f.id]);
    }
  }
  // Undeclared keys of the first record become fields (on a new table, or when no fields were sent).
  for (const k of Object.keys(first)) {
    if (!sentIds.has(k) && !existing.has(k)) {
      if (input.fields && input.fields.length) continue; // reported as extra keys below
      sent.push({ id: k, type: guessType(first[k]) });
      sentIds.add(k);
    }
  }
  if (typeErrors.length) throw new ValidationError({ fields: typeErrors });
  const defs: { id: string; ddl: string }[] = [];
  for (const f of sent) {
    if (existing.has(f.id)) continue;
    const p = parseTypeName(String(f.type));
    if (!p || !(await validType(s, p.base))) throw new ValidationError({ fields: [`"${f.type}" is not a valid field type`] });
    defs.push({ id: f.id, ddl: p.ddl });
  }
  // Records may only use known fields.
  const known = new Set([...existing, ...sentIds]);
  records.forEach((r, i) => {
    const extra = Object.keys(r).filter((k) => !known.has(k));
    if (extra.length) throw new ValidationError({ records: [`row "${i + 1}" has extra keys "${extra.join(', ')}"`] });
  });

  let created = false;
  let dropped = false;
  let aliasesToRestore: string[] = [];
  try {
    if (!t) {
      const cols = ['"_id" serial PRIMARY KEY', ...defs.map((d) => `${qi(d.id)} ${d.ddl}`), `${qi(FTS_COLUMN)} tsvector`];
      await s.exec(`CREATE TABLE ${qi(input.resource_id)} (${cols.join(', ')})`);
      await s.query(`INSERT INTO ${COUNTS_TABLE} (id, n) VALUES ($1, 0) ON CONFLICT (id) DO UPDATE SET n = 0`, [input.resource_id]);
      created = true;
    } else {
      const drops =
        input.delete_fields && input.fields ? t.columns.filter((c) => !c.id.startsWith('_') && !sentIds.has(c.id)).map((c) => c.id) : [];
      if (defs.length || drops.length) {
        // Alias views freeze their column list: drop them now, recreate after the change.
        aliasesToRestore = await aliasesOf(s, t.oid);
        for (const a of aliasesToRestore) await s.exec(`DROP VIEW IF EXISTS ${qi(a)}`);
        const parts = [...drops.map((d) => `DROP COLUMN ${qi(d)}`), ...defs.map((d) => `ADD COLUMN ${qi(d.id)} ${d.ddl}`)];
        await s.exec(`ALTER TABLE ${qi(input.resource_id)} ${parts.join(', ')}`);
        dropped = drops.length > 0;
      }
    }
  } catch (e) {
    if (isDbError(e) && !isRace(e)) throw new ValidationError({ fields: [e.message] });
    throw e;
  }
  // Stored full-text vectors: set up on a new table, indexes for new columns, a table of before
  // them migrated; when the row's text changed (dropped columns) every row is filled again.
  const hadVectors = !!t && !!storedLanguage(t);
  // The comment is written again below (primary_key): read it under the lock of its writers, so
  // that keys the full-text filler writes meanwhile (fts_row_split, fts_rebuild_since) are kept.
  if (input.primary_key !== undefined && !created) await lockTableComment(s, input.resource_id);
  const added = await setUpFullText(s, input.resource_id, s.fts);
  t = (await readTable(s, input.resource_id))!;
  if (dropped && hadVectors) await unfillAll(s, t);
  if ((dropped && hadVectors) || (added && !created)) s.wroteRows(t, Number.MAX_SAFE_INTEGER);
  // Data dictionary: the info of each sent field, as the column comment.
  for (const f of sent) {
    if (f.info !== undefined && f.info !== null) {
      await s.exec(`COMMENT ON COLUMN ${qi(t.name)}.${qi(f.id)} IS ${quoteLiteral(JSON.stringify(f.info))}`);
    }
  }
  const columnIds = new Set(t.columns.map((c) => c.id));
  const checkFields = (key: string, names: string[]) => {
    const bad = names.filter((n) => !columnIds.has(n));
    if (bad.length) throw new ValidationError({ [key]: [`fields "${bad.join(', ')}" do not exist`] });
  };
  const prefix = `ds_${t.oid}_`;
  const ownIndexes = (
    await s.query<{ name: string }>(`SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1`, [t.name])
  ).rows.map((r) => r.name);
  try {
    if (input.primary_key !== undefined) {
      checkFields('primary_key', input.primary_key);
      if (ownIndexes.includes(`${prefix}pk`)) await s.exec(`DROP INDEX ${qi(prefix + 'pk')}`);
      if (input.primary_key.length) {
        await s.exec(`CREATE UNIQUE INDEX ${qi(prefix + 'pk')} ON ${qi(t.name)} (${input.primary_key.map(qi).join(', ')})`);
      }
      t.meta = { ...t.meta, primary_key: input.primary_key };
      await s.exec(`COMMENT ON TABLE ${qi(t.name)} IS ${quoteLiteral(JSON.stringify(t.meta))}`);
    }
    if (input.indexes !== undefined) {
      for (const i of ownIndexes.filter((n) => n.startsWith(`${prefix}idx_`))) await s.exec(`DROP INDEX ${qi(i)}`);
      let n = 0;
      for (const spec of input.indexes) {
        const cols = spec
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean);
        checkFields('indexes', cols);
        await s.exec(`CREATE INDEX ${qi(`${prefix}idx_${n++}`)} ON ${qi(t.name)} (${cols.map(qi).join(', ')})`);
      }
    }
  } catch (e) {
    if (isDbError(e) && e.code === '23505' && !isRace(e)) throw uniqueError(e);
    throw e;
  }
  if (input.triggers !== undefined) {
    const trg = (await s.query<{ name: string }>(`SELECT tgname AS name FROM pg_trigger WHERE tgrelid = $1 AND NOT tgisinternal`, [t.oid]))
      .rows;
    for (const x of trg.filter((r) => r.name.startsWith(`${prefix}trg_`))) await s.exec(`DROP TRIGGER ${qi(x.name)} ON ${qi(t.name)}`);
    let n = 0;
    for (const tr of input.triggers) {
      // No name holds a NUL (PostgreSQL's message for a name that is no function).
      if (tr.function.includes('\u0000'))
        throw new ValidationError({ triggers: [`function ${tr.function.replaceAll('\u0000', '\\u0000')}() does not exist`] });
      try {
        await s.exec(userTriggerSql(`${prefix}trg_${n++}`, t.name, tr.function, true));
      } catch (e) {
        if (isDbError(e) && !isRace(e)) throw new ValidationError({ triggers: [e.message] });
        throw e;
      }
    }
  }
  // Aliases: replaced when sent; otherwise the ones dropped for a column change come back.
  const aliasTarget = input.aliases ?? aliasesToRestore;
  if (input.aliases !== undefined || aliasesToRestore.length) {
    const current = await aliasesOf(s, t.oid);
    for (const a of aliasTarget) {
      const other = await readTable(s, a);
      if (other && !current.includes(a)) throw new ValidationError({ aliases: [`The alias "${a}" already exists.`] });
    }
    for (const a of current) await s.exec(`DROP VIEW IF EXISTS ${qi(a)}`);
    for (const a of aliasTarget) await s.exec(`CREATE VIEW ${qi(a)} AS SELECT * FROM ${qi(t.name)}`);
  }
  if (records.length) await insertRecords(s, t, records);
  if (input.calculate_record_count) await recount(s, t.name);
  return { fields: sent, created };
}
