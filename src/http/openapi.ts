// The OpenAPI 3.1 document of the Action API, made from the registry's declarations: one path per
// action (POST with a JSON body; GET with query parameters for side-effect-free actions), the
// envelope with the declared result schema, the error envelope, and the three ways to send a token.
import type { TSchema } from '@sinclair/typebox';
import type { Services } from '../context.ts';
import type { ActionDefinition } from '../actions/registry.ts';
import { actionHelp } from '../actions/registry.ts';
import { objectSchema, type Params } from '../validation/params.ts';
import { namedSchemas } from '../actions/result-schemas.ts';
import { API_COMPAT_VERSION } from '../actions/site.ts';
import { siteUrl } from '../config/site-url.ts';
import { componentName, fieldsSchema, schemaLanguages, type JsonSchema } from '../scheming/json-schema.ts';
import type { SchemingField, SchemingSchemas } from '../scheming/types.ts';

type Json = Record<string, unknown>;

/** The entity an action belongs to, by its name's first word(s). */
const TAG_PREFIXES: [RegExp, string][] = [
  [/^(package|dataset|current_package|bulk_update)_|_relationship/, 'dataset'],
  [/^resource_view|^resource_create_default/, 'resource view'],
  [/^resource_/, 'resource'],
  [/^(organization)_/, 'organization'],
  [/^(group)_/, 'group'],
  [/^(member|package_collaborator)_/, 'member'],
  [/^(user|get_site_user)_?/, 'user'],
  [/^api_token_/, 'api token'],
  [/^datastore_/, 'datastore'],
  [/^(tag|vocabulary)_/, 'tag'],
  [/^config_option_/, 'config'],
];

export function actionTag(def: ActionDefinition<any, any>): string {
  if (def.tag) return def.tag;
  for (const [re, tag] of TAG_PREFIXES) if (re.test(def.name)) return tag;
  return 'site';
}

/** Replaces the named result schemas by references to components. */
function withRefs(schema: unknown, inside?: TSchema): unknown {
  if (!schema || typeof schema !== 'object') return schema;
  for (const [name, named] of Object.entries(namedSchemas)) {
    if (schema === named && schema !== inside) return { $ref: `#/components/schemas/${name}` };
  }
  if (Array.isArray(schema)) return schema.map((s) => withRefs(s, inside));
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, withRefs(v, inside)]));
}

/** JSON Schema without TypeBox's symbol keys (JSON.stringify drops them; a deep copy makes it explicit). */
const plain = (s: unknown): Json => JSON.parse(JSON.stringify(s)) as Json;

function requestSchema(def: ActionDefinition<any, any>): Json {
  return plain(objectSchema(def.params ?? {}, def.extras ?? 'drop'));
}

function queryParameters(params: Params | undefined): Json[] {
  return Object.entries(params ?? {})
    .filter(([, prm]) => !prm.state.hidden)
    .map(([name, prm]) => {
      const schema = plain(prm.jsonSchema());
      const simple = ['string', 'integer', 'number', 'boolean'].includes(schema.type as string) || 'anyOf' in schema;
      const base = { name, in: 'query', required: prm.isRequired, description: prm.state.description };
      if (schema.type === 'array') return { ...base, schema, style: 'form', explode: true };
      // Objects and free JSON go in the query string as JSON text.
      return simple ? { ...base, schema } : { ...base, content: { 'application/json': { schema } } };
    });
}

function envelope(result: unknown): Json {
  return {
    type: 'object',
    required: ['help', 'success', 'result'],
    properties: {
      help: { type: 'string', description: 'the help_show URL of this action' },
      success: { const: true },
      result: result ?? {},
    },
  };
}

const ERRORS: [string, string][] = [
  ['400', 'Bad request (malformed body, unknown action) or Search Query Error'],
  ['403', 'Authorization Error'],
  ['404', 'Not Found Error'],
  ['409', 'Validation Error: the field errors are keys of the error object'],
  ['413', 'The request body is too large'],
  ['500', 'Internal Server Error'],
];

function operation(def: ActionDefinition<any, any>, method: 'get' | 'post', services: Services): Json {
  const description = actionHelp(def, services);
  const summary = def.description.split(/\n|(?<=\.)\s/)[0].slice(0, 120);
  const responses: Json = {
    200: {
      description: def.returns?.description ?? 'the result',
      content: { 'application/json': { schema: envelope(def.returns?.schema ? withRefs(def.returns.schema) : undefined) } },
    },
  };
  for (const [code, text] of ERRORS) {
    responses[code] = { description: text, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } };
  }
  const op: Json = {
    operationId: method === 'get' ? `${def.name}_get` : def.name,
    summary,
    description,
    tags: [actionTag(def)],
    security: [{}, { authorizationHeader: [] }, { bearerToken: [] }, { apiKeyHeader: [] }],
    responses,
  };
  if (method === 'post') {
    op.requestBody = { required: false, content: { 'application/json': { schema: requestSchema(def) } } };
  } else {
    op.parameters = queryParameters(def.params);
  }
  return op;
}

export function openApiDocument(services: Services): Json {
  const { registry, config } = services;
  const paths: Json = {};
  const tags = new Set<string>();
  for (const name of registry.names()) {
    const def = registry.get(name);
    tags.add(actionTag(def));
    const item: Json = { post: operation(def, 'post', services) };
    if (def.sideEffectFree) item.get = operation(def, 'get', services);
    paths[`/api/3/action/${name}`] = item;
  }
  const schemas: Json = Object.fromEntries(Object.entries(namedSchemas).map(([n, s]) => [n, plain(withRefs(s, s))]));
  schemas.ErrorEnvelope = {
    type: 'object',
    required: ['help', 'success', 'error'],
    properties: {
      help: { type: 'string' },
      success: { const: false },
      error: {
        type: 'object',
        required: ['__type', 'message'],
        properties: {
          __type: {
            enum: [
              'Validation Error',
              'Not Found Error',
              'Authorization Error',
              'Search Query Error',
              'Search Error',
              'Bad Request',
              'Integrity Error',
              'Internal Server Error',
            ],
          },
          message: { type: 'string' },
        },
        additionalProperties: { description: 'field errors of a Validation Error: {field: [messages]}' },
      },
    },
  };
  if (services.scheming) addSchemingTypes(services, services.scheming, paths, schemas);
  return {
    openapi: '3.1.0',
    info: {
      title: `${config.str('svc.site_title')} Action API`,
      version: API_COMPAT_VERSION,
      description:
        'The CKAN-compatible Action API of svc. Every answer is the envelope {help, success, result} or {help, success: false, error}.',
    },
    // Relative to the host the document is read from: "Try it out" then calls the same origin as
    // the page (an absolute site_url fails with CORS when the page is opened under another name).
    servers: [{ url: new URL(siteUrl(config)).pathname }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        authorizationHeader: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'the API token as is' },
        bearerToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Authorization: Bearer <token>' },
        apiKeyHeader: {
          type: 'apiKey',
          in: 'header',
          name: config.str('apikey_header_name'),
          description: 'the API token in the key header',
        },
      },
    },
  };
}

// --- custom schemas (svc.scheming.*): one component per type and direction ---------------------

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A core property with what the schema file says of it: its type when that differs, else the description. */
function mergeProperty(core: Json | undefined, custom: JsonSchema): Json {
  if (!core) return custom;
  if (core.type === custom.type && !('items' in custom) && !('properties' in custom)) return { ...core, ...custom };
  return custom;
}

interface TypeFamily {
  /** Component name prefix and the kind's word (Dataset/dataset, Group/group, Organization/organization). */
  prefix: string;
  kind: string;
  /** The type a request without "type" gets. */
  defaultType: string;
  /** The named result schema the show components extend. */
  base: 'Dataset' | 'Group';
  createAction: string;
  updateAction: string;
  /** Actions answering one dict of this kind. */
  resultActions: string[];
  types: { type: string; fields: SchemingField[]; languages?: string[]; resourceFields?: SchemingField[] }[];
  /** Types without a schema are accepted with the default fields. */
  fallback: boolean;
}

function families(scheming: SchemingSchemas): TypeFamily[] {
  const group = (kind: 'group' | 'organization', map: SchemingSchemas['groups']): TypeFamily => ({
    prefix: kind === 'group' ? 'Group' : 'Organization',
    kind,
    defaultType: kind,
    base: 'Group',
    createAction: `${kind}_create`,
    updateAction: `${kind}_update`,
    resultActions: [`${kind}_create`, `${kind}_update`, `${kind}_patch`, `${kind}_show`],
    types: [...map.values()].map((s) => ({ type: s.type, fields: s.fields, languages: schemaLanguages(s) })),
    fallback: false,
  });
  const datasets: TypeFamily = {
    prefix: 'Dataset',
    kind: 'dataset',
    defaultType: 'dataset',
    base: 'Dataset',
    createAction: 'package_create',
    updateAction: 'package_update',
    resultActions: ['package_create', 'package_update', 'package_patch', 'package_show'],
    types: [...scheming.datasets.values()].map((s) => ({
      type: s.dataset_type,
      fields: s.dataset_fields,
      languages: schemaLanguages(s),
      resourceFields: s.resource_fields,
    })),
    fallback: scheming.datasetFallback,
  };
  return [datasets, group('group', scheming.groups), group('organization', scheming.organizations)].filter((f) => f.types.length);
}

/** The request body schema of an action, as the document has it. */
function bodySchema(paths: Json, action: string): Json | undefined {
  const item = paths[`/api/3/action/${action}`] as Json | undefined;
  const post = item?.post as Json | undefined;
  return (post?.requestBody as any)?.content?.['application/json']?.schema as Json | undefined;
}

/** The core request schema with a type's fields in it (flat, so Swagger UI's example body shows them all). */
function typedRequest(base: Json, fields: SchemingField[], languages: string[] | undefined, typeSchema: Json, typeRequired: boolean): Json {
  const out = JSON.parse(JSON.stringify(base)) as Json;
  const core = (out.properties ?? {}) as Record<string, Json>;
  const custom = fieldsSchema(fields, 'input', languages);
  // the type and the schema's fields first, in the file's order (Swagger UI's example body follows it)
  const properties: Record<string, Json> = { type: typeSchema };
  for (const [name, schema] of Object.entries(custom.properties)) properties[name] = mergeProperty(core[name], schema);
  for (const [name, schema] of Object.entries(core)) if (!(name in properties)) properties[name] = schema;
  const required = new Set([...((out.required as string[]) ?? []), ...custom.required, ...(typeRequired ? ['type'] : [])]);
  out.properties = properties;
  if (required.size) out.required = [...required];
  return out;
}

/** A result: the named core dict and what a type adds to it (core keys only get their description). */
function typedResult(base: string, coreKeys: Set<string>, fields: SchemingField[], languages: string[] | undefined, extra: Json): Json {
  const { properties } = fieldsSchema(fields, 'output', languages);
  const added: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    added[name] = coreKeys.has(name) ? (schema.description ? { description: schema.description } : {}) : schema;
  }
  return { allOf: [ref(base), { type: 'object', properties: { ...added, ...extra } }] };
}

function setResult(paths: Json, action: string, result: Json): void {
  const item = paths[`/api/3/action/${action}`] as Record<string, any> | undefined;
  for (const op of [item?.post, item?.get]) {
    const content = op?.responses?.['200']?.content?.['application/json'];
    if (content) content.schema = envelope(result);
  }
}

/** package_search's result datasets: one of the types' dicts. */
function setSearchResults(paths: Json, item: Json): void {
  const search = (paths['/api/3/action/package_search'] as Record<string, any> | undefined) ?? {};
  for (const op of [search.post, search.get]) {
    const results = op?.responses?.['200']?.content?.['application/json']?.schema?.properties?.result?.properties?.results;
    if (results?.type === 'array') results.items = item;
  }
}

function setBody(paths: Json, action: string, schema: Json): void {
  const content = (paths[`/api/3/action/${action}`] as Record<string, any> | undefined)?.post?.requestBody?.content;
  if (content) content['application/json'] = { schema };
}

/**
 * Per type of svc.scheming.*: named components for create, update and show (with the type's
 * resources for datasets); the create/update bodies and the results refer to them by type (oneOf:
 * "type" tells them apart). A type without a schema is refused (svc.scheming.dataset_fallback:
 * validated by the core fields, a variant of its own).
 */
function addSchemingTypes(services: Services, scheming: SchemingSchemas, paths: Json, schemas: Json): void {
  const coreKeys = (name: string) => new Set(Object.keys(((schemas[name] as Json)?.properties as Json) ?? {}));
  for (const family of families(scheming)) {
    const { prefix, kind } = family;
    const names = family.types.map((t) => t.type);
    const bodies: Record<'create' | 'update', Json[]> = { create: [], update: [] };
    const results: Json[] = [];
    for (const { type, fields, languages, resourceFields } of family.types) {
      const typeSchema = { type: 'string', const: type, description: `the ${kind} type` };
      const required = type !== family.defaultType;
      let resources: Json | undefined;
      let resourceResult: Json = {};
      if (resourceFields) {
        const itemBase = ((bodySchema(paths, family.createAction)?.properties as any)?.resources?.items ?? { type: 'object' }) as Json;
        const createName = componentName('Resource', type, 'create');
        const custom = fieldsSchema(resourceFields, 'input', languages);
        const item = JSON.parse(JSON.stringify(itemBase)) as Json;
        const props = (item.properties ?? {}) as Record<string, Json>;
        for (const [name, schema] of Object.entries(custom.properties)) props[name] = mergeProperty(props[name], schema);
        item.properties = props;
        const req = new Set([...((item.required as string[]) ?? []), ...custom.required]);
        // url is core's own rule (optional with an upload)
        req.delete('url');
        if (req.size) item.required = [...req];
        else delete item.required;
        schemas[createName] = { ...item, title: `Resource of a ${type} ${kind} (create, update)` };
        resources = { type: 'array', items: ref(createName), description: `the resources, with the fields of ${type} resources` };
        const showName = componentName('Resource', type, 'show');
        schemas[showName] = {
          ...typedResult('Resource', coreKeys('Resource'), resourceFields, languages, {}),
          title: `Resource of a ${type} ${kind}`,
        };
        resourceResult = { resources: { type: 'array', items: ref(showName) } };
      }
      for (const dir of ['create', 'update'] as const) {
        const base = bodySchema(paths, dir === 'create' ? family.createAction : family.updateAction);
        if (!base) continue;
        const name = componentName(prefix, type, dir);
        const schema = typedRequest(base, fields, languages, typeSchema, required);
        if (resources) (schema.properties as Json).resources = resources;
        schemas[name] = { ...schema, title: `${type} (${dir})` };
        bodies[dir].push(ref(name));
      }
      const showName = componentName(prefix, type, 'show');
      schemas[showName] = {
        ...typedResult(family.base, coreKeys(family.base), fields, languages, { type: typeSchema, ...resourceResult }),
        title: type,
      };
      results.push(ref(showName));
    }
    // With the fallback, every other type (the default one included) has the core fields.
    if (family.fallback) {
      const other = { type: 'string', not: { enum: names }, description: `a ${kind} type without a schema of its own` };
      for (const dir of ['create', 'update'] as const) {
        const base = bodySchema(paths, dir === 'create' ? family.createAction : family.updateAction);
        if (!base) continue;
        const name = componentName(prefix, dir);
        schemas[name] = {
          // a request without "type" is of the default type: this variant when that type has no schema
          ...typedRequest(base, [], undefined, other, names.includes(family.defaultType)),
          title: `other ${kind} types (${dir})`,
        };
        bodies[dir].push(ref(name));
      }
      const showName = componentName(prefix, 'show');
      schemas[showName] = {
        allOf: [ref(family.base), { type: 'object', properties: { type: other } }],
        title: `other ${kind} types`,
      };
      results.push(ref(showName));
    }
    const typeList = names.map((n) => `"${n}"`).join(', ');
    for (const dir of ['create', 'update'] as const) {
      const action = dir === 'create' ? family.createAction : family.updateAction;
      if (bodies[dir].length) {
        setBody(paths, action, { oneOf: bodies[dir], description: `one schema per ${kind} type (${typeList}), chosen by "type"` });
      }
    }
    for (const action of family.resultActions) {
      if (services.registry.has(action)) setResult(paths, action, { oneOf: results });
    }
    if (family.kind === 'dataset') setSearchResults(paths, { oneOf: results });
  }
}
