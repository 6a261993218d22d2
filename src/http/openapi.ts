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

function operation(def: ActionDefinition<any, any>, method: 'get' | 'post'): Json {
  const description = actionHelp(def);
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
    const item: Json = { post: operation(def, 'post') };
    if (def.sideEffectFree) item.get = operation(def, 'get');
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
