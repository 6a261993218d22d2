// Tags: tag_list, tag_show, tag_create (vocabulary tags), tag_delete.
import { Type } from '@sinclair/typebox';
import type { ActionContext } from './context.ts';
import { defineAction, type ActionDefinition } from './registry.ts';
import { p } from '../validation/params.ts';
import { anyone, sysadminOnly } from '../auth/rules.ts';
import { visiblePackagesCondition } from '../auth/authz.ts';
import { NotFoundError } from '../errors.ts';
import { listTags } from '../model/tags.ts';
import {
  deleteTag,
  findTag,
  findVocabularyRow,
  insertTag,
  publicPackagesWithTag,
  tagDict,
  type VocabularyRow,
} from '../model/vocabularies.ts';
import { packageDicts } from '../model/package-dict.ts';
import { notifyPackageChange } from '../model/packages.ts';
import { tagNameErrors } from '../validation/package-schema.ts';
import { Invalid, type Validator } from '../validation/validate.ts';
import { datasetSchema, listOf, names, tagSchema } from './result-schemas.ts';

/** Most datasets tag_show lists. */
const TAG_SHOW_DATASETS = 1000;

export async function vocabularyOr404(ctx: ActionContext, idOrName: string): Promise<VocabularyRow> {
  const v = await findVocabularyRow(ctx.db, idOrName);
  if (!v) throw new NotFoundError(`Could not find vocabulary "${idOrName}"`);
  return v;
}

/** The tag name rules of datasets (length 2-100; letters, digits, space, - _ .), all messages. */
export const tagNameValidator: Validator = (v: string) => {
  const errs = tagNameErrors(v);
  if (errs.length) throw new Invalid(errs.join(' '));
  return v;
};

const vocabularyExists: Validator = async (v: string, f) => {
  const vocab = await findVocabularyRow(f.context.db, v);
  if (!vocab) throw new Invalid('Tag vocabulary was not found.');
  return vocab.id;
};

async function tagOr404(ctx: ActionContext, id: string, vocabularyRef?: string) {
  const vocab = vocabularyRef ? await findVocabularyRow(ctx.db, vocabularyRef) : undefined;
  const tag = vocabularyRef && !vocab ? undefined : await findTag(ctx.db, id, vocab?.id ?? null);
  if (!tag) throw new NotFoundError(`Could not find tag "${id}"`);
  return tag;
}

export const tagActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'tag_list',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return the free tags used by active datasets you may see, or the tags of a vocabulary.',
    params: {
      query: p.string('only tags whose name contains this (case-insensitive)'),
      q: p.string('the same as query'),
      vocabulary_id: p.string('id or name of a vocabulary: its tags instead of the free tags'),
      all_fields: p.boolean('tag dicts instead of names').default(false),
    },
    returns: { description: 'tag names, or tag dicts with all_fields', rtype: 'list', schema: Type.Union([names, listOf(tagSchema)]) },
    handler: async (ctx, prm) => {
      const vocabularyId = prm.vocabulary_id ? (await vocabularyOr404(ctx, prm.vocabulary_id)).id : undefined;
      const params: unknown[] = [];
      const visible = await visiblePackagesCondition(ctx, params, 'p');
      const tags = await listTags(ctx.db, { query: prm.query ?? prm.q, vocabularyId, visible, params });
      return prm.all_fields ? tags.map(tagDict) : tags.map((t) => t.name);
    },
  }),
  defineAction({
    name: 'tag_show',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return a tag: a free tag, or a tag of the vocabulary given by vocabulary_id.',
    params: {
      id: p.string('the id or name of the tag').required(),
      vocabulary_id: p.string('the id or name of the vocabulary the tag belongs to (without it a free tag is looked for)'),
      include_datasets: p.boolean(`include up to ${TAG_SHOW_DATASETS} active public datasets with this tag`).default(false),
    },
    returns: {
      description: 'the tag (id, name, display_name, vocabulary_id, packages)',
      rtype: 'dictionary',
      schema: Type.Intersect([tagSchema, Type.Object({ packages: Type.Optional(listOf(datasetSchema)) })]),
    },
    handler: async (ctx, prm) => {
      const tag = await tagOr404(ctx, prm.id, prm.vocabulary_id);
      const out = tagDict(tag);
      if (prm.include_datasets) out.packages = await packageDicts(ctx, await publicPackagesWithTag(ctx.db, tag.id, TAG_SHOW_DATASETS));
      return out;
    },
  }),
  defineAction({
    name: 'tag_create',
    sideEffectFree: false,
    auth: sysadminOnly,
    description: 'Create a tag of a vocabulary (free tags are created by adding them to datasets). Sysadmin only.',
    params: {
      name: p.string('the tag name (2-100 characters: letters, digits, spaces, -, _ and .)').required().use(tagNameValidator),
      vocabulary_id: p.string('the id or name of the vocabulary').required().use(vocabularyExists),
    },
    returns: { description: 'the new tag', rtype: 'dictionary', schema: tagSchema },
    handler: async (ctx, prm) => {
      const vocab = (await findVocabularyRow(ctx.db, prm.vocabulary_id))!;
      return tagDict(await insertTag(ctx.db, prm.name, vocab));
    },
  }),
  defineAction({
    name: 'tag_delete',
    sideEffectFree: false,
    auth: sysadminOnly,
    description: 'Delete a tag; datasets lose it. Sysadmin only.',
    params: {
      id: p.string('the id or name of the tag').required(),
      vocabulary_id: p.string('the id or name of the vocabulary of the tag (without it a free tag)'),
    },
    returns: { description: 'null', schema: Type.Null() },
    handler: async (ctx, prm) => {
      const tag = await tagOr404(ctx, prm.id, prm.vocabulary_id);
      for (const pkgId of await deleteTag(ctx.db, tag.id)) await notifyPackageChange(ctx, pkgId);
      return null;
    },
  }),
];
