// Translations of terms (tag names, group titles, ...) into languages.
import type { Queryable } from '../db/database.ts';

export interface TermTranslation {
  term: string;
  term_translation: string;
  lang_code: string;
}

/** Sets the translation of a term into a language (one row per term and language). */
export async function saveTermTranslation(db: Queryable, t: TermTranslation): Promise<void> {
  await db.query(
    `INSERT INTO term_translations (term, term_translation, lang_code) VALUES ($1, $2, $3)
     ON CONFLICT (term, lang_code) DO UPDATE SET term_translation = EXCLUDED.term_translation`,
    [t.term, t.term_translation, t.lang_code],
  );
}

export async function findTermTranslations(db: Queryable, terms: string[], langCodes?: string[]): Promise<TermTranslation[]> {
  const params: unknown[] = [terms];
  let cond = '';
  if (langCodes?.length) {
    params.push(langCodes);
    cond = ' AND lang_code = ANY($2::text[])';
  }
  return (
    await db.query<TermTranslation>(
      `SELECT term, term_translation, lang_code FROM term_translations WHERE term = ANY($1::text[])${cond} ORDER BY term, lang_code`,
      params,
    )
  ).rows;
}
