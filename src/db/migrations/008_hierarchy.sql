-- Hierarchy links follow CKAN's convention from now on: the membership row belongs to the
-- sub-group (group_id) and names its parent (table_id). Links written before pointed the other
-- way (group_id = the parent); turn them around so existing hierarchies stay as they were.
UPDATE members SET group_id = table_id, table_id = group_id
WHERE table_name = 'group'
  AND EXISTS (SELECT 1 FROM groups g WHERE g.id = members.table_id);
