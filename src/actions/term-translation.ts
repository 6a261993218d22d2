// Term translations: term_translation_update, term_translation_update_many, term_translation_show.
import { Type } from '@sinclair/typebox';
import { defineAction, type ActionDefinition } from './registry.ts';
import { p } from '../validation/params.ts';
import { anyone, sysadminOnly } from '../auth/rules.ts';
import { ValidationError } from '../errors.ts';
import { findTermTranslations, saveTermTranslation } from '../model/term-translations.ts';
import { listOf } from './result-schemas.ts';

const translationSchema = Type.Object(
  { term: Type.String(), term_translation: Type.String(), lang_code: Type.String() },
  { title: 'TermTranslation' },
);

const translationParams = {
  term: p.text('the term to translate').required().maxLength(500),
  term_translation: p.text('its translation').required(),
  lang_code: p.string('the language code of the translation (e.g. de, pt_BR)').required().maxLength(20),
};

export const termTranslationActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'term_translation_update',
    sideEffectFree: false,
    auth: sysadminOnly,
    description: 'Create or change the translation of a term into a language. Sysadmin only.',
    params: translationParams,
    returns: { description: 'the translation', rtype: 'dictionary', schema: translationSchema },
    handler: async (ctx, prm) => {
      const t = { term: prm.term, term_translation: prm.term_translation, lang_code: prm.lang_code };
      await saveTermTranslation(ctx.db, t);
      return t;
    },
  }),
  defineAction({
    name: 'term_translation_update_many',
    sideEffectFree: false,
    auth: sysadminOnly,
    description: 'Create or change many term translations at once (all or none). Sysadmin only.',
    params: { data: p.listOf(translationParams, 'the translations, each with term, term_translation and lang_code') },
    returns: { description: '{"success": "N rows updated"}', rtype: 'dictionary', schema: Type.Object({ success: Type.String() }) },
    handler: async (ctx, prm) => {
      if (!prm.data?.length)
        throw new ValidationError({ data: ['term_translation_update_many needs to have a list of dicts in field data'] });
      for (const t of prm.data) await saveTermTranslation(ctx.db, t);
      return { success: `${prm.data.length} rows updated` };
    },
  }),
  defineAction({
    name: 'term_translation_show',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return the translations of terms, into all languages or the ones given.',
    params: {
      terms: p.stringList('the terms').required(),
      lang_codes: p.stringList('only these languages (default all)'),
    },
    returns: { description: 'translations: term, term_translation, lang_code', rtype: 'list', schema: listOf(translationSchema) },
    handler: (ctx, prm) => findTermTranslations(ctx.db, prm.terms, prm.lang_codes),
  }),
];
