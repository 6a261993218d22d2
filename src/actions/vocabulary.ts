// Vocabularies (named sets of tags): vocabulary_create/update/delete/list/show.
import { Type } from '@sinclair/typebox';
import type { ActionContext } from './context.ts';
import { defineAction, type ActionDefinition } from './registry.ts';
import { p } from '../validation/params.ts';
import { anyone, sysadminOnly } from '../auth/rules.ts';
import { notifyPackageChange } from '../model/packages.ts';
import {
  deleteVocabulary,
  insertVocabulary,
  listVocabularies,
  renameVocabulary,
  setVocabularyTags,
  tagDict,
  vocabularyTags,
  type VocabularyRow,
} from '../model/vocabularies.ts';
import { Invalid, type Validator } from '../validation/validate.ts';
import { tagNameValidator, vocabularyOr404 } from './tag.ts';
import { listOf, tagSchema } from './result-schemas.ts';

const vocabularySchema = Type.Object(
  { id: Type.String(), name: Type.String(), tags: listOf(tagSchema) },
  { additionalProperties: true, title: 'Vocabulary' },
);

const vocabularyName: Validator = (v: string) => {
  if (v.length < 2) throw new Invalid('Name must be at least 2 characters long');
  if (v.length > 100) throw new Invalid('Name must be a maximum of 100 characters long');
  return v;
};

const tagsParam = (what: string) => p.listOf({ name: p.string('tag name').required().use(tagNameValidator) }, what);

async function vocabularyDicts(ctx: ActionContext, vocabs: VocabularyRow[]) {
  const tags = await vocabularyTags(
    ctx.db,
    vocabs.map((v) => v.id),
  );
  return vocabs.map((v) => ({ id: v.id, name: v.name, tags: tags.filter((t) => t.vocabulary_id === v.id).map(tagDict) }));
}

async function notifyAll(ctx: ActionContext, packageIds: string[]) {
  for (const id of new Set(packageIds)) await notifyPackageChange(ctx, id);
}

export const vocabularyActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'vocabulary_list',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return all tag vocabularies with their tags.',
    returns: { description: 'vocabularies', rtype: 'list', schema: listOf(vocabularySchema) },
    handler: async (ctx) => vocabularyDicts(ctx, await listVocabularies(ctx.db)),
  }),
  defineAction({
    name: 'vocabulary_show',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return one tag vocabulary with its tags.',
    params: { id: p.string('the id or name of the vocabulary').required() },
    returns: { description: 'the vocabulary', rtype: 'dictionary', schema: vocabularySchema },
    handler: async (ctx, prm) => (await vocabularyDicts(ctx, [await vocabularyOr404(ctx, prm.id)]))[0],
  }),
  defineAction({
    name: 'vocabulary_create',
    sideEffectFree: false,
    auth: sysadminOnly,
    description: 'Create a tag vocabulary. Sysadmin only.',
    params: {
      name: p.string('the vocabulary name (2-100 characters, unique)').required().use(vocabularyName),
      tags: tagsParam('its tags, as {name} dicts'),
    },
    returns: { description: 'the new vocabulary', rtype: 'dictionary', schema: vocabularySchema },
    handler: async (ctx, prm) => {
      const vocab = await insertVocabulary(ctx.db, prm.name);
      if (prm.tags)
        await setVocabularyTags(
          ctx.db,
          vocab,
          prm.tags.map((t) => t.name),
        );
      return (await vocabularyDicts(ctx, [vocab]))[0];
    },
  }),
  defineAction({
    name: 'vocabulary_update',
    sideEffectFree: false,
    auth: sysadminOnly,
    description: 'Rename a tag vocabulary and/or replace its tags (tags not listed are deleted, also from datasets). Sysadmin only.',
    params: {
      id: p.string('the id or name of the vocabulary').required(),
      name: p.string('the new name').use(vocabularyName),
      tags: tagsParam('the new tags, as {name} dicts (when given, they replace the old ones)'),
    },
    returns: { description: 'the vocabulary', rtype: 'dictionary', schema: vocabularySchema },
    handler: async (ctx, prm) => {
      const vocab = await vocabularyOr404(ctx, prm.id);
      if (prm.name && prm.name !== vocab.name) {
        await renameVocabulary(ctx.db, vocab.id, prm.name);
        vocab.name = prm.name;
      }
      if (prm.tags)
        await notifyAll(
          ctx,
          await setVocabularyTags(
            ctx.db,
            vocab,
            prm.tags.map((t) => t.name),
          ),
        );
      return (await vocabularyDicts(ctx, [vocab]))[0];
    },
  }),
  defineAction({
    name: 'vocabulary_delete',
    sideEffectFree: false,
    auth: sysadminOnly,
    description: 'Delete a tag vocabulary and its tags (datasets lose them). Sysadmin only.',
    params: { id: p.string('the id or name of the vocabulary').required() },
    returns: { description: 'null', schema: Type.Null() },
    handler: async (ctx, prm) => {
      const vocab = await vocabularyOr404(ctx, prm.id);
      await notifyAll(ctx, await deleteVocabulary(ctx.db, vocab.id));
      return null;
    },
  }),
];
