// The harvest's own limits for reading remote catalogs (the loader's are for files; a catalog
// page is small and a source on a private address is a different decision).
import { declareOption } from '../config/options.ts';

const positive = (v: number) => (v > 0 ? undefined : 'must be a positive number');

declareOption({
  name: 'svc.harvest.allow_private_urls',
  type: 'bool',
  default: false,
  description: 'Allow harvest sources on loopback, private, link-local (cloud metadata) and other reserved addresses',
});
declareOption({
  name: 'svc.harvest.timeout',
  type: 'int',
  default: 60,
  validate: positive,
  description: 'Longest time one request to a harvest source may take, in seconds',
});
declareOption({
  name: 'svc.harvest.max_size',
  type: 'int',
  default: 50,
  validate: positive,
  description: 'Largest document (one catalog page or API answer) read from a harvest source, in MB',
});
declareOption({
  name: 'svc.harvest.user_agent',
  type: 'string',
  default: '',
  description: 'User-Agent sent to harvest sources (default svc-harvest/<version> (+<site url>))',
});
declareOption({
  name: 'svc.harvest.import_transaction',
  type: 'int',
  default: 20,
  validate: (v: number) => (v >= 1 && v <= 50 ? undefined : 'must be between 1 and 50'),
  description:
    'Harvest objects imported per transaction (each in a savepoint: a refused record is an error of its own object; one commit for all)',
});
