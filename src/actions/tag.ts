// tag_list: free tags in use (or the tags of a vocabulary).
import { Type } from '@sinclair/typebox';
import { defineAction, type ActionDefinition } from './registry.ts';
import { p } from './params.ts';
import { listOf, tagSchema } from './result-schemas.ts';
import { anyone } from '../auth/rules.ts';
import { NotFoundError } from '../errors.ts';
import { findVocabulary, listTags } from '../model/tags.ts';

export const tagActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'tag_list',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return the free tags used by active public datasets, or the tags of a vocabulary.',
    params: {
      query: p.string('only tags whose name contains this'),
      q: p.string('another name of query'),
      vocabulary_id: p.string('id or name of a vocabulary'),
      all_fields: p.boolean('tag dicts instead of names').default(false),
    },
    returns: { description: 'tag names, or tag dicts when all_fields is true', rtype: 'list', schema: Type.Union([listOf(Type.String()), listOf(tagSchema)]) },
    handler: async (ctx, p) => {
      let vocabularyId: string | undefined;
      if (p.vocabulary_id) {
        const v = await findVocabulary(ctx.db, p.vocabulary_id);
        if (!v) throw new NotFoundError('Could not find vocabulary "' + p.vocabulary_id + '"');
        vocabularyId = v.id;
      }
      const tags = await listTags(ctx.db, { query: p.query ?? p.q, vocabularyId });
      if (!p.all_fields) return tags.map((t) => t.name);
      return tags.map((t) => ({ display_name: t.name, id: t.id, name: t.name, vocabulary_id: t.vocabulary_id }));
    },
  }),
];
