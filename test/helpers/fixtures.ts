// The set-up many test files share: callers as request options, and an organization with a team.
import type { CallOptions, TestApp } from './app.ts';

export interface TestUser {
  id: string;
  name: string;
  token: string;
}

type Capacity = 'admin' | 'editor' | 'member';

/** Request options that call as this user. */
export const as = (u: TestUser): CallOptions => ({ token: u.token });

/** Request options that call as the app's sysadmin. */
export const asSysadmin = (t: TestApp): CallOptions => ({ token: t.sysadminToken });

/**
 * Creates the users named in `team` (user name -> capacity) and an organization with them as
 * members, created by `creator` (who becomes its admin) or by the sysadmin.
 */
export async function organizationWithTeam(
  t: TestApp,
  org: Record<string, unknown> & { name: string },
  team: Record<string, Capacity>,
  creator?: TestUser,
): Promise<{ organization: any; users: Record<string, TestUser> }> {
  const users: Record<string, TestUser> = {};
  for (const name of Object.keys(team)) users[name] = await t.user(name);
  const organization = await t.ok(
    'organization_create',
    { ...org, users: Object.entries(team).map(([name, capacity]) => ({ name, capacity })) },
    creator ? as(creator) : asSysadmin(t),
  );
  return { organization, users };
}
