// Agent-onboarding fixtures over real HTTP: anonymous boards and their agents, and an account
// filled up to the token cap.
import { expect } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import type { Store, TokenRecord } from '../../store/ports/store.js';
import { Client } from './server.js';

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
export const bearer = (base: string, secret: string): Client => new Client(base, { authorization: `Bearer ${secret}` });

export interface AnonymousBoard {
  /** The board's agent, with the workspace token anon-provision issued. */
  agent: Client;
  accountId: string;
  projectId: string;
  secret: string;
  claimSecret: string;
  expiresAt: string;
  token: { agentId: string };
}

/** An anonymous board: its agent's client and what anon-provision answered. */
export async function anonymousBoard(base: string, body?: unknown): Promise<AnonymousBoard> {
  const res = await new Client(base).post('/api/accounts/anon-provision', body);
  expect(res.status, res.text).toBe(201);
  return { agent: bearer(base, res.body.secret), ...(res.body as Omit<AnonymousBoard, 'agent'>) };
}

/** Gives an account `n` more live tokens (their secrets unknown), written straight to the store. */
export async function holdTokens(store: Store, accountId: string, n: number): Promise<void> {
  const at = Date.now();
  const filler = (i: number): TokenRecord => ({
    _id: randomUUID(),
    version: 1,
    accountId,
    agentId: randomUUID(),
    secretHash: sha256(randomUUID()),
    prefix: 'agb_filler',
    name: `filler-${i}`,
    scope: 'account',
    boardId: null,
    role: null,
    resources: null,
    expiresAt: null,
    lastUsedAt: null,
    revoked: false,
    createdAt: at,
  });
  for (let i = 0; i < n; i += 50)
    await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => store.tokens.insert(filler(i + j))));
}
