// tag_list: free tags in use (or the tags of a vocabulary).
import type { ActionDefinition } from './registry.ts';
import { anyone } from '../auth/rules.ts';
import { visiblePackagesCondition } from '../auth/authz.ts';
import { NotFoundError } from '../errors.ts';
import { findVocabulary, listTags } from '../model/tags.ts';
import { bool, ignoreMissing, unicodeString } from '../validation/validators.ts';

export const tagActions: ActionDefinition<any, any>[] = [
  {
    name: 'tag_list',
    sideEffectFree: true,
    auth: anyone,
    schema: {
      query: [ignoreMissing, unicodeString],
      q: [ignoreMissing, unicodeString],
      vocabulary_id: [ignoreMissing, unicodeString],
      all_fields: bool(false),
    },
    help: 'Return the free tags used by active datasets you may see, or the tags of a vocabulary.\n\n:param query: only tags whose name contains this (optional)\n:param vocabulary_id: id or name of a vocabulary (optional)\n:param all_fields: tag dicts instead of names (optional, default false)\n:rtype: list',
    handler: async (ctx, p) => {
      let vocabularyId: string | undefined;
      if (p.vocabulary_id) {
        const v = await findVocabulary(ctx.db, p.vocabulary_id);
        if (!v) throw new NotFoundError('Could not find vocabulary "' + p.vocabulary_id + '"');
        vocabularyId = v.id;
      }
      const params: unknown[] = [];
      const visible = await visiblePackagesCondition(ctx, params, 'p');
      const tags = await listTags(ctx.db, { query: p.query ?? p.q, vocabularyId, visible, params });
      if (!p.all_fields) return tags.map((t) => t.name);
      return tags.map((t) => ({ display_name: t.name, id: t.id, name: t.name, vocabulary_id: t.vocabulary_id }));
    },
  },
];
