// A harvest source's config applied to a remote dataset (ckanext-harvest's keys): default tags,
// clean tags, default and override extras with their substitutions, remote groups and
// organizations kept, dropped or listed to be created, the owner organization. Pure: no database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applySourceConfig, mungeTag, type ConfigApplyContext, type LocalRef } from '../src/harvest/config-apply.ts';
import { readerConfigError } from '../src/harvest/readers.ts';
import { registerJsonLdProfiles } from '../src/dcat/jsonld-profiles.ts';

const refs = (...list: LocalRef[]) => new Map(list.flatMap((r) => [[r.id, r] as const, [r.name, r] as const]));
const ctx = (over: Partial<ConfigApplyContext> = {}): ConfigApplyContext => ({
  source: { id: 'src-1', url: 'https://remote.example.org/', title: 'Remote portal', owner_org: 'local-org-id' },
  jobId: 'job-1',
  objectId: 'obj-1',
  datasetId: 'ds-1',
  organizations: refs({ id: 'org-water-id', name: 'water' }),
  groups: refs({ id: 'grp-nature-id', name: 'nature' }, { id: 'grp-city-id', name: 'city' }),
  remoteOrganization: null,
  ...over,
});
const remote = () => ({
  name: 'levels',
  tags: [{ name: 'Wasser Stände' }, { name: 'rivers' }],
  groups: [
    { id: 'remote-nature-id', name: 'nature', title: 'Nature' },
    { id: 'remote-sport-id', name: 'sport', title: 'Sport', description: 'Games', package_count: 4 },
  ],
  extras: [
    { key: 'spatial_text', value: 'Upper valley' },
    { key: 'licence_note', value: 'remote note' },
  ],
});

test('no config: the source organization owns it, remote groups are dropped, the input is untouched', () => {
  const input = remote();
  const r = applySourceConfig(input, {}, ctx());
  assert.equal(r.dataset.owner_org, 'local-org-id');
  assert.deepEqual(r.dataset.groups, []);
  assert.deepEqual(r.dataset.tags, input.tags);
  assert.deepEqual(r.groupsToCreate, []);
  assert.equal(r.organizationToCreate, null);
  assert.equal(input.groups.length, 2);
});

test('default tags are added once; clean_tags munges as CKAN does and drops duplicates', () => {
  let r = applySourceConfig(remote(), { default_tags: ['rivers', 'harvested'] }, ctx());
  assert.deepEqual(
    (r.dataset.tags as { name: string }[]).map((t) => t.name),
    ['Wasser Stände', 'rivers', 'harvested'],
  );
  r = applySourceConfig(remote(), { default_tags: [{ name: 'europe' }] }, ctx());
  assert.deepEqual((r.dataset.tags as { name: string }[]).at(-1), { name: 'europe' });
  r = applySourceConfig(
    { tags: [{ name: 'Wasser Stände' }, { name: 'wasser-stande' }, { name: '!!' }, { name: 'x' }] },
    { clean_tags: true },
    ctx(),
  );
  assert.deepEqual(r.dataset.tags, [{ name: 'wasser-stande' }, { name: 'x_' }]);
  assert.equal(mungeTag('  Straße & Ærø  '), 'strasse--aero');
  assert.equal(mungeTag('a'.repeat(120)).length, 100);
});

test('default extras: substitutions, and existing extras kept unless override_extras', () => {
  const config = {
    default_extras: {
      licence_note: 'set here',
      harvested_from: '{harvest_source_url}/dataset/{dataset_id} ({harvest_source_title})',
      ids: '{harvest_source_id} {harvest_job_id} {harvest_object_id} {{literal}} {unknown}',
    },
  };
  let r = applySourceConfig(remote(), config, ctx());
  const extras = (d: Record<string, unknown>) =>
    Object.fromEntries((d.extras as { key: string; value: string }[]).map((e) => [e.key, e.value]));
  assert.deepEqual(extras(r.dataset), {
    spatial_text: 'Upper valley',
    licence_note: 'remote note',
    harvested_from: 'https://remote.example.org/dataset/ds-1 (Remote portal)',
    ids: 'src-1 job-1 obj-1 {literal} {unknown}',
  });
  r = applySourceConfig(remote(), { ...config, override_extras: true }, ctx());
  assert.equal(extras(r.dataset).licence_note, 'set here');
});

test('remote_groups only_local keeps those existing here; create lists the others; default groups join', () => {
  let r = applySourceConfig(remote(), { remote_groups: 'only_local', default_groups: ['city', 'nowhere'] }, ctx());
  assert.deepEqual(r.dataset.groups, [{ name: 'nature' }, { name: 'city' }]);
  assert.deepEqual(r.groupsToCreate, []);
  r = applySourceConfig(remote(), { remote_groups: 'create' }, ctx());
  assert.deepEqual(r.dataset.groups, [{ name: 'nature' }, { name: 'sport' }]);
  assert.deepEqual(r.groupsToCreate, [{ id: 'remote-sport-id', name: 'sport', title: 'Sport', description: 'Games' }]);
});

test('remote_orgs: the local organization of that id or name, else created, else the source organization', () => {
  const water = { id: 'remote-water-id', name: 'water', title: 'Water board' };
  const other = { id: 'remote-roads-id', name: 'roads', title: 'Roads', description: 'Streets' };
  assert.equal(
    applySourceConfig(remote(), { remote_orgs: 'only_local' }, ctx({ remoteOrganization: water })).dataset.owner_org,
    'org-water-id',
  );
  let r = applySourceConfig(remote(), { remote_orgs: 'only_local' }, ctx({ remoteOrganization: other }));
  assert.equal(r.dataset.owner_org, 'local-org-id');
  assert.equal(r.organizationToCreate, null);
  r = applySourceConfig(remote(), { remote_orgs: 'create' }, ctx({ remoteOrganization: other }));
  assert.equal(r.dataset.owner_org, 'roads');
  assert.deepEqual(r.organizationToCreate, other);
  // Without remote_orgs the remote organization is ignored.
  assert.equal(applySourceConfig(remote(), {}, ctx({ remoteOrganization: water })).dataset.owner_org, 'local-org-id');
});

test('the config keys only readers use are checked, with messages naming them', () => {
  // The dcat plugin registers the output-only profiles when it starts.
  registerJsonLdProfiles(() => ({ title: 'test' }));
  assert.equal(
    readerConfigError({ rows: 100, organizations_filter_include: ['a'], rdf_format: 'text/turtle', profiles: ['dcat_us_3'] }),
    null,
  );
  assert.equal(readerConfigError({ rows: 0 }), 'rows must be a whole number from 1 to 1000');
  assert.equal(readerConfigError({ rows: '10' }), 'rows must be a whole number from 1 to 1000');
  assert.equal(readerConfigError({ groups_filter_exclude: 'sport' }), 'groups_filter_exclude must be a list of names');
  assert.match(readerConfigError({ rdf_format: 'yaml' })!, /^rdf_format "yaml" is not a format svc reads \(turtle/);
  assert.match(readerConfigError({ profiles: ['nope'] })!, /Unknown RDF profile "nope"/);
  assert.match(readerConfigError({ profiles: ['schemaorg'] })!, /none of the profiles schemaorg reads DCAT/);
});
