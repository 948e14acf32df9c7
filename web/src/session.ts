// Who is signed in: loaded once from GET /api/auth/me, cleared on sign-out.
import { signal } from '@preact/signals';
import { client, csrfToken, refused } from './api.js';

import type { Account } from './types.js';

export type { Account };

/** undefined while loading, null when signed out. */
export const me = signal<Account | null | undefined>(undefined);

/** The names of the account's own tokens by agent principal, so the board shows "builder-1" rather than an id. */
export const agentNames = signal<ReadonlyMap<string, string>>(new Map());

/**
 * Names the server told the page with what it sent (a board's roster, heartbeats and events, as
 * each reader may see them): agents of other accounts on a board the person watches, by principal.
 * Kept for the session; a name heard again replaces the old one (a renamed token).
 */
export const heardNames = signal<ReadonlyMap<string, string>>(new Map());

/** Keeps what `names` adds or changes; the signal changes (and names re-render) only then. */
export function hearNames(names: Iterable<readonly [string, string | undefined]>): void {
  let next: Map<string, string> | null = null;
  for (const [principal, name] of names) {
    if (!name || (next ?? heardNames.value).get(principal) === name) continue;
    next ??= new Map(heardNames.value);
    next.set(principal, name);
  }
  if (next) heardNames.value = next;
}

async function loadAgentNames(): Promise<void> {
  const res = await client.get('/api/accounts/tokens');
  agentNames.value = new Map(res.tokens.map((t) => [`agent:${t.agentId}`, t.name]));
}

export async function loadSession(): Promise<void> {
  try {
    const res = await client.get('/api/auth/me');
    me.value = res.user;
    void loadAgentNames().catch(() => undefined); // names are a nicety: ids still show without them
  } catch (e) {
    if (refused(e) && (e.status === 401 || e.status === 403)) me.value = null;
    else throw e;
  }
}

export function signedIn(account: Account): void {
  const another = me.value?.id !== account.id;
  me.value = account;
  if (another) void loadAgentNames().catch(() => undefined); // their own tokens' names, not the last account's
}

export async function signOut(): Promise<void> {
  await client.post('/api/auth/logout');
  csrfToken.value = null;
  me.value = null;
  agentNames.value = new Map();
  heardNames.value = new Map();
}

/** The time, ticking once a second, for countdowns and "ago" labels. */
export const now = signal(Date.now());
setInterval(() => (now.value = Date.now()), 1000);
