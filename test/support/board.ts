// A board with an owner session and agents holding their own workspace tokens.
import { Client, signedUp } from './server.js';

export interface TestBoard {
  owner: Client;
  projectId: string;
  agent(name: string, role?: 'admin' | 'member' | 'viewer'): Promise<Client & { principal: string }>;
  /** An agent whose resource token names `resources` (work ids and groups); `defaults` holds its Bearer header. */
  resourceAgent(name: string, resources: string[]): Promise<Client & { principal: string }>;
}

export async function newBoard(base: string): Promise<TestBoard> {
  const { client: owner } = await signedUp(base);
  const projectId = (await owner.get('/api/projects')).body.projects[0].projectId as string;
  const issued = async (body: Record<string, unknown>) => {
    const res = await owner.post('/api/accounts/tokens', { ...body, projectId });
    if (res.status !== 201) throw new Error(`token: ${res.text}`);
    return Object.assign(new Client(base, { authorization: `Bearer ${res.body.secret}` }), {
      principal: `agent:${res.body.token.agentId}`,
    });
  };
  return {
    owner,
    projectId,
    agent: (name, role = 'member') => issued({ name, scope: 'workspace', role }),
    resourceAgent: (name, resources) => issued({ name, scope: 'resource', resources }),
  };
}

export const head = (n: number): string => n.toString(16).padStart(7, '0').repeat(2);
export const digest = (c: string): string => `sha256:${c.repeat(64).slice(0, 64)}`;
