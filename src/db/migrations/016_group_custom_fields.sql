-- Custom fields of groups and organizations (a group or organization schema's fields beyond the
-- core ones, svc.scheming.group_schemas / organization_schemas), as typed JSON like
-- packages.custom_fields: shown as top-level keys of the group dict.
ALTER TABLE groups ADD COLUMN custom_fields jsonb;
