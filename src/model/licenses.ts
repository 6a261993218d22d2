// The default licence register (CKAN's 15 default licences, in CKAN's order).
export interface License {
  id: string;
  title: string;
  url: string;
  domain_content: boolean;
  domain_data: boolean;
  domain_software: boolean;
  family: string;
  is_generic: boolean;
  od_conformance: string;
  osd_conformance: string;
  maintainer: string;
  status: string;
}

function lic(id: string, title: string, o: Partial<License> = {}): License {
  return {
    id,
    title,
    url: '',
    domain_content: false,
    domain_data: false,
    domain_software: false,
    family: '',
    is_generic: false,
    od_conformance: 'not reviewed',
    osd_conformance: 'not reviewed',
    maintainer: '',
    status: 'active',
    ...o,
  };
}

const OD = 'http://www.opendefinition.org/licenses/';

export const DEFAULT_LICENSES: readonly License[] = Object.freeze([
  lic('notspecified', 'License not specified', { is_generic: true }),
  lic('odc-pddl', 'Open Data Commons Public Domain Dedication and License (PDDL)', {
    domain_data: true,
    od_conformance: 'approved',
    url: OD + 'odc-pddl',
  }),
  lic('odc-odbl', 'Open Data Commons Open Database License (ODbL)', {
    domain_data: true,
    od_conformance: 'approved',
    url: OD + 'odc-odbl',
  }),
  lic('odc-by', 'Open Data Commons Attribution License', { domain_data: true, od_conformance: 'approved', url: OD + 'odc-by' }),
  lic('cc-zero', 'Creative Commons CCZero', { domain_content: true, domain_data: true, od_conformance: 'approved', url: OD + 'cc-zero' }),
  lic('cc-by', 'Creative Commons Attribution', { od_conformance: 'approved', url: OD + 'cc-by' }),
  lic('cc-by-sa', 'Creative Commons Attribution Share-Alike', { domain_content: true, od_conformance: 'approved', url: OD + 'cc-by-sa' }),
  lic('gfdl', 'GNU Free Documentation License', { domain_content: true, od_conformance: 'approved', url: OD + 'gfdl' }),
  lic('other-open', 'Other (Open)', { domain_content: true, is_generic: true, od_conformance: 'approved' }),
  lic('other-pd', 'Other (Public Domain)', { domain_content: true, is_generic: true, od_conformance: 'approved' }),
  lic('other-at', 'Other (Attribution)', { domain_content: true, is_generic: true, od_conformance: 'approved' }),
  lic('uk-ogl', 'UK Open Government Licence (OGL)', {
    domain_content: true,
    od_conformance: 'approved',
    url: 'http://reference.data.gov.uk/id/open-government-licence',
  }),
  lic('cc-nc', 'Creative Commons Non-Commercial (Any)', { url: 'http://creativecommons.org/licenses/by-nc/2.0/' }),
  lic('other-nc', 'Other (Non-Commercial)', { is_generic: true }),
  lic('other-closed', 'Other (Not Open)', { is_generic: true }),
]);

const BY_ID = new Map(DEFAULT_LICENSES.map((l) => [l.id, l]));

export function findLicense(id: string | null | undefined): License | undefined {
  return id ? BY_ID.get(id) : undefined;
}

export function isOpenLicense(l: License | undefined): boolean {
  return !!l && (l.od_conformance === 'approved' || l.osd_conformance === 'approved');
}

/** license_list entry: 12 keys, every value a string ("True"/"False" for flags). */
export function licenseListEntry(l: License): Record<string, string> {
  const b = (v: boolean) => (v ? 'True' : 'False');
  return {
    domain_content: b(l.domain_content),
    domain_data: b(l.domain_data),
    domain_software: b(l.domain_software),
    family: l.family,
    id: l.id,
    is_generic: b(l.is_generic),
    maintainer: l.maintainer,
    od_conformance: l.od_conformance,
    osd_conformance: l.osd_conformance,
    status: l.status,
    title: l.title,
    url: l.url,
  };
}
