// Every configuration option is declared once here (or by a plugin through declareOption):
// name, type, default, validation, whether it is a secret, and whether config_option_update may change it.

export type OptionType = 'string' | 'int' | 'bool' | 'list' | 'float';

export interface OptionDeclaration {
  name: string;
  type: OptionType;
  default: unknown;
  description: string;
  secret?: boolean;
  /** Editable at run time through config_option_update. */
  runtimeEditable?: boolean;
  /** Extra check after type conversion; returns an error message or undefined. */
  validate?: (value: any) => string | undefined;
}

const declarations = new Map<string, OptionDeclaration>();

export function declareOption(d: OptionDeclaration): void {
  declarations.set(d.name, d);
}

export function optionDeclarations(): OptionDeclaration[] {
  return [...declarations.values()];
}

export function optionDeclaration(name: string): OptionDeclaration | undefined {
  return declarations.get(name);
}

const localeName = (v: string) => (/^[a-z]{2}(_[A-Z]{2})?$/.test(v) ? undefined : `"${v}" must be a locale name such as fr or pt_BR`);
const positive = (v: number) => (v > 0 ? undefined : 'must be a positive number');
const nonNegative = (v: number) => (v >= 0 ? undefined : 'must be zero or more');
const port = (v: number) => (v > 0 && v < 65536 ? undefined : 'must be a port number (1-65535)');
const httpUrl = (v: string) =>
  v === '' || /^https?:\/\/[^\s/?#@]+(\/[^\s]*)?$/i.test(v) ? undefined : 'must be an http:// or https:// URL';
const postgresUrl = (v: string) => (v === '' || /^postgres(ql)?:\/\//.test(v) ? undefined : 'must be a postgresql:// URL');

const core: OptionDeclaration[] = [
  { name: 'svc.port', type: 'int', default: 5000, description: 'TCP port the server listens on', validate: port },
  { name: 'svc.host', type: 'string', default: 'localhost', description: 'Address the server binds to' },
  {
    name: 'svc.site_url',
    type: 'string',
    default: '',
    runtimeEditable: true,
    validate: httpUrl,
    description: 'Public base URL of the site (defaults to http://HOST:PORT)',
  },
  { name: 'svc.site_id', type: 'string', default: 'default', description: 'Identifier of this site' },
  { name: 'svc.storage_path', type: 'string', default: './data', description: 'Folder for the embedded databases and uploaded files' },
  {
    name: 'svc.database_url',
    type: 'string',
    default: '',
    secret: true,
    validate: postgresUrl,
    description: 'PostgreSQL URL of the catalog database; empty uses the embedded database',
  },
  {
    name: 'svc.database_pool_size',
    type: 'int',
    default: 10,
    validate: positive,
    description: 'Connections per process to the catalog database (server mode)',
  },
  {
    name: 'svc.database_read_urls',
    type: 'list',
    default: [],
    secret: true,
    validate: (urls: string[]) => urls.map(postgresUrl).find(Boolean),
    description: 'PostgreSQL URLs of streaming replicas of the catalog database: side-effect-free actions and pages read there',
  },
  {
    name: 'svc.database_replica_max_lag',
    type: 'float',
    default: 10,
    validate: positive,
    description: 'Seconds a read replica may be behind the primary before it is skipped',
  },
  {
    name: 'svc.database_replica_wait',
    type: 'int',
    default: 1000,
    validate: nonNegative,
    description: "Longest a caller's read waits, in ms, for a replica to replay the caller's own write (then the primary answers)",
  },
  {
    name: 'svc.plugins',
    type: 'list',
    default: [
      'datastore',
      'loader',
      'activity',
      'image_view',
      'text_view',
      'webpage_view',
      'datatables_view',
      'video_view',
      'audio_view',
      'dcat',
      'structured_data',
      'croissant',
    ],
    description: 'Plugins to load, space or comma separated',
  },
  {
    name: 'svc.secret',
    type: 'string',
    default: '',
    secret: true,
    description: 'Secret for signing API tokens; generated once and kept in the database when empty',
  },
  {
    name: 'svc.log_level',
    type: 'string',
    default: 'info',
    description: 'pino log level (fatal, error, warn, info, debug, trace, silent)',
    validate: (v: string) =>
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(v)
        ? undefined
        : 'must be one of fatal, error, warn, info, debug, trace, silent',
  },
  {
    name: 'svc.max_body_size',
    type: 'int',
    default: 50,
    validate: positive,
    description: 'Largest accepted request body in MB (JSON and forms)',
  },
  { name: 'svc.max_resource_size', type: 'int', default: 100, validate: positive, description: 'Largest accepted resource upload in MB' },
  {
    name: 'svc.max_header_size',
    type: 'int',
    default: 16,
    validate: positive,
    description: 'Largest accepted request line and headers in KB (a longer query string is refused: send a JSON body with POST)',
  },
  {
    name: 'svc.headers_timeout',
    type: 'int',
    default: 20,
    validate: positive,
    description: 'Seconds a client has to send a request line and headers before the connection is closed',
  },
  {
    name: 'svc.body_idle_timeout',
    type: 'int',
    default: 30,
    validate: positive,
    description: 'Seconds a client may send nothing while its request body is still incoming before the connection is closed',
  },
  {
    name: 'svc.request_timeout',
    type: 'int',
    default: 300,
    validate: positive,
    description: 'Seconds a client has to send a whole request (headers and body, uploads included) before the connection is closed',
  },
  {
    name: 'svc.trust_proxy',
    type: 'list',
    default: [],
    description:
      'Addresses of trusted reverse proxies (IPs, CIDR ranges, or loopback/linklocal/uniquelocal) whose X-Forwarded-For/-Proto/-Host headers are honoured; empty trusts none',
  },
  {
    name: 'apikey_header_name',
    type: 'string',
    default: 'X-SVC-API-Key',
    description: 'Name of the alternative header that carries an API token or key',
  },
  { name: 'svc.hide_version', type: 'bool', default: false, description: 'Hide the version in status_show from non-sysadmins' },
  {
    name: 'svc.locale_default',
    type: 'string',
    default: 'en',
    validate: (v: string) => localeName(v),
    description: 'Language of the web pages at addresses without a locale prefix and when the browser asks for none offered',
  },
  {
    name: 'svc.locales_offered',
    type: 'list',
    default: ['en', 'fr', 'de', 'es'],
    validate: (locales: string[]) => locales.map(localeName).find(Boolean),
    description: 'Languages of the web interface: each is served under its own prefix (/fr/dataset) and in the language switcher',
  },
  { name: 'svc.error_emails_to', type: 'string', default: '', description: 'Address for error e-mails (reported by status_show)' },
  // Runtime-editable site options (config_option_update).
  { name: 'svc.site_title', type: 'string', default: 'svc', runtimeEditable: true, description: 'Site title' },
  { name: 'svc.site_description', type: 'string', default: '', runtimeEditable: true, description: 'Site description' },
  { name: 'svc.site_logo', type: 'string', default: '/base/images/svc-logo.png', runtimeEditable: true, description: 'Site logo URL' },
  { name: 'svc.site_about', type: 'string', default: '', runtimeEditable: true, description: 'About page text (markdown)' },
  { name: 'svc.site_intro_text', type: 'string', default: '', runtimeEditable: true, description: 'Home page intro text (markdown)' },
  { name: 'svc.site_custom_css', type: 'string', default: '', runtimeEditable: true, description: 'Custom CSS added to every page' },
  { name: 'svc.main_css', type: 'string', default: '/base/css/main.css', runtimeEditable: true, description: 'Main stylesheet' },
  {
    name: 'svc.homepage_style',
    type: 'string',
    default: '1',
    runtimeEditable: true,
    description: 'Home page layout',
    validate: (v: string) => (/^[1-3]$/.test(v) ? undefined : 'must be 1, 2 or 3'),
  },
  {
    name: 'svc.hola',
    type: 'string',
    default: '',
    runtimeEditable: true,
    description: 'Free-form greeting option (spec default editable key)',
  },
  { name: 'svc.datasets_per_page', type: 'int', default: 20, validate: positive, description: 'Datasets per page in dataset listings' },
  // Authorization (CKAN defaults).
  { name: 'svc.auth.anon_create_dataset', type: 'bool', default: false, description: 'Anonymous users may create datasets' },
  { name: 'svc.auth.create_unowned_dataset', type: 'bool', default: false, description: 'Datasets may be created without an organization' },
  {
    name: 'svc.auth.create_dataset_if_not_in_organization',
    type: 'bool',
    default: true,
    description: 'Users outside any organization may create (unowned) datasets',
  },
  { name: 'svc.auth.user_create_groups', type: 'bool', default: true, description: 'Users may create groups' },
  { name: 'svc.auth.user_create_organizations', type: 'bool', default: true, description: 'Users may create organizations' },
  { name: 'svc.auth.user_delete_groups', type: 'bool', default: true, description: 'Group admins may delete groups' },
  { name: 'svc.auth.user_delete_organizations', type: 'bool', default: true, description: 'Organization admins may delete organizations' },
  { name: 'svc.auth.create_user_via_api', type: 'bool', default: false, description: 'Anyone may create users through user_create' },
  { name: 'svc.auth.create_user_via_web', type: 'bool', default: false, description: 'Visitors may register on the web site' },
  {
    name: 'svc.auth.roles_that_cascade_to_sub_groups',
    type: 'list',
    default: ['admin'],
    description: 'Capacities that cascade down the organization hierarchy',
  },
  { name: 'svc.auth.public_user_details', type: 'bool', default: true, description: 'User details are visible to anonymous callers' },
  { name: 'svc.auth.public_activity_stream_detail', type: 'bool', default: false, description: 'Activity detail is visible to everyone' },
  { name: 'svc.auth.allow_dataset_collaborators', type: 'bool', default: false, description: 'Datasets may have collaborators' },
  { name: 'svc.auth.allow_admin_collaborators', type: 'bool', default: false, description: 'Collaborators may have the admin capacity' },
  {
    name: 'svc.auth.allow_collaborators_to_change_owner_org',
    type: 'bool',
    default: false,
    description: 'Collaborators may move a dataset to another organization',
  },
  { name: 'svc.auth.create_default_api_keys', type: 'bool', default: false, description: 'New users get a legacy API key' },
  { name: 'svc.auth.session_timeout', type: 'int', default: 1209600, description: 'Seconds a web session lasts after sign-in' },
  { name: 'svc.auth.enable_cookie_auth_in_api', type: 'bool', default: true, description: 'Session cookies authenticate API calls' },
  // Lists and limits.
  {
    name: 'svc.group_and_organization_list_max',
    type: 'int',
    default: 1000,
    validate: positive,
    description: 'Largest group_list/organization_list page (names)',
  },
  {
    name: 'svc.group_and_organization_list_all_fields_max',
    type: 'int',
    default: 25,
    validate: positive,
    description: 'Largest group_list/organization_list page with all_fields',
  },
  {
    name: 'svc.scheming.dataset_schemas',
    type: 'list',
    default: [],
    description: 'Custom dataset schemas: paths of ckanext-scheming YAML or JSON files (docs/schemas.md)',
  },
  { name: 'svc.scheming.group_schemas', type: 'list', default: [], description: 'Custom group schemas (YAML or JSON files)' },
  {
    name: 'svc.scheming.organization_schemas',
    type: 'list',
    default: [],
    description: 'Custom organization schemas (YAML or JSON files)',
  },
  {
    name: 'svc.scheming.presets',
    type: 'list',
    default: ['ckanext.scheming:presets.json'],
    description:
      "Preset files of the schemas: the built-in ckanext.scheming:presets.json, ckanext.fluent:presets.json and ckanext.dcat.schemas:presets.yaml, or paths of one's own",
  },
  {
    name: 'svc.scheming.dataset_fallback',
    type: 'bool',
    default: false,
    description: 'A dataset type without a schema is validated by the default schema instead of refused',
  },
  {
    name: 'svc.search.timeout',
    type: 'int',
    default: 10000,
    validate: positive,
    description: 'Longest a package_search statement may run, in ms (then a Search Query Error)',
  },
  { name: 'svc.search.rows_max', type: 'int', default: 1000, validate: positive, description: 'Largest package_search page' },
  { name: 'svc.extra_resource_fields', type: 'list', default: [], description: 'Resource extra fields searchable by resource_search' },
  {
    name: 'svc.user_list_limit',
    type: 'int',
    default: 20,
    validate: nonNegative,
    description: 'Default page size of user_list (0 = no limit)',
  },
  {
    name: 'svc.search.remove_deleted_packages',
    type: 'bool',
    default: true,
    description: 'Deleted datasets leave the search index (include_deleted finds them only when false)',
  },
  // Mail (CKAN's names): password reset links. No server: reset by e-mail is off.
  { name: 'smtp.server', type: 'string', default: '', description: 'SMTP server as host or host:port (empty: the site sends no mail)' },
  { name: 'smtp.starttls', type: 'bool', default: false, description: 'Require STARTTLS on the SMTP connection' },
  { name: 'smtp.user', type: 'string', default: '', description: 'SMTP user name' },
  { name: 'smtp.password', type: 'string', default: '', secret: true, description: 'SMTP password' },
  { name: 'smtp.mail_from', type: 'string', default: '', description: 'Sender address of the mail the site sends' },
  { name: 'svc.auth.reset_key_lifetime', type: 'int', default: 86400, description: 'Seconds a password reset link stays valid' },
  { name: 'search.facets.limit', type: 'int', default: 50, description: 'Default facet.limit of package_search (negative: every value)' },
  {
    name: 'svc.search.rank_window',
    type: 'int',
    default: 1000,
    validate: positive,
    description: 'package_search scores at most this many matches (the newest first), see README',
  },
  {
    name: 'svc.search.counted_word_min',
    type: 'int',
    default: 2000,
    validate: nonNegative,
    description:
      'A one-word package_search with facets matching at least this many public datasets has its facets counted from then on (0: never), see README',
  },
  {
    name: 'svc.log.format',
    type: 'string',
    default: 'auto',
    description:
      'Server log format: pretty (a line per event for people), json (a JSON object per line), auto (pretty on a terminal, else json)',
    validate: (v: string) => (['pretty', 'json', 'auto'].includes(v) ? undefined : 'must be one of pretty, json, auto'),
  },
];
core.forEach(declareOption);

// --- scale-out: object storage, operations endpoints, shutdown (docs/deployment.md) ---
const scaleOut: OptionDeclaration[] = [
  {
    name: 'svc.storage.backend',
    type: 'string',
    default: 'local',
    validate: (v: string) => (['local', 's3'].includes(v) ? undefined : 'must be one of local, s3'),
    description: 'Where uploaded resource files are kept: local (under svc.storage_path/resources) or s3 (an S3-compatible object store)',
  },
  {
    name: 'svc.storage.s3.endpoint',
    type: 'string',
    default: '',
    validate: httpUrl,
    description: 'URL of the S3-compatible service (MinIO, Ceph, Garage, ...); empty: AWS S3 of svc.storage.s3.region',
  },
  { name: 'svc.storage.s3.region', type: 'string', default: 'us-east-1', description: 'Region of the bucket' },
  { name: 'svc.storage.s3.bucket', type: 'string', default: '', description: 'Bucket holding the files (required with the s3 backend)' },
  {
    name: 'svc.storage.s3.access_key_id',
    type: 'string',
    default: '',
    description: "Access key id; empty: the SDK's usual credential sources (environment, instance role)",
  },
  { name: 'svc.storage.s3.secret_access_key', type: 'string', default: '', secret: true, description: 'Secret access key' },
  {
    name: 'svc.storage.s3.force_path_style',
    type: 'bool',
    default: false,
    description: 'Address the bucket in the path (http://host/bucket/key), as most self-hosted services need',
  },
  {
    name: 'svc.storage.s3.prefix',
    type: 'string',
    default: '',
    validate: (v: string) =>
      v === '' || /^[A-Za-z0-9!_.*'()/-]+\/$/.test(v) ? undefined : "must be empty or end with / (letters, digits, !_.*'()-/)",
    description: 'Key prefix of every object svc writes (e.g. "svc/"), when the bucket is shared',
  },
  {
    name: 'svc.storage.s3.presigned_downloads',
    type: 'bool',
    default: false,
    description: 'Downloads answer 302 to a presigned URL of the object store instead of passing the bytes through svc',
  },
  {
    name: 'svc.storage.s3.presigned_expiry',
    type: 'int',
    default: 300,
    validate: (v: number) => (v > 0 && v <= 604800 ? undefined : 'must be between 1 and 604800 seconds'),
    description: 'Seconds a presigned download URL stays valid',
  },
  {
    name: 'svc.storage.s3.part_size',
    type: 'int',
    default: 8,
    validate: (v: number) => (v >= 5 && v <= 512 ? undefined : 'must be between 5 and 512 (MB)'),
    description: 'Part size in MB of multipart uploads (memory per upload: about 4 parts)',
  },
  { name: 'svc.metrics.enabled', type: 'bool', default: true, description: 'Serve Prometheus metrics at /metrics' },
  {
    name: 'svc.metrics.token',
    type: 'string',
    default: '',
    secret: true,
    description: 'When set, /metrics answers only requests with "Authorization: Bearer <token>"',
  },
  {
    name: 'svc.shutdown_timeout',
    type: 'int',
    default: 30,
    validate: nonNegative,
    description: 'Seconds a stopping server (SIGTERM) lets requests in flight finish before closing their connections',
  },
];
scaleOut.forEach(declareOption);
