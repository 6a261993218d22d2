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

/**
 * Waits until the resource's load has ended (complete or error; with `finishedAfter`, one that
 * finished after that ISO time) and returns its xloader_status.
 */
export async function waitForLoad(t: TestApp, resourceId: string, opts: { ms?: number; finishedAfter?: string } = {}): Promise<any> {
  const end = Date.now() + (opts.ms ?? 60_000);
  for (;;) {
    const r = await t.call('xloader_status', { resource_id: resourceId }, asSysadmin(t));
    const st = r.body.result;
    const ended = r.status === 200 && ['complete', 'error'].includes(st.status);
    if (ended && String(st.task_info?.finished_timestamp ?? '') > (opts.finishedAfter ?? '')) return st;
    if (Date.now() > end) throw new Error(`the load of ${resourceId} did not end: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}
