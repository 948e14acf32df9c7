// A board with an owner session and agents holding their own workspace tokens.
import { Client, signedUp } from './server.js';

export interface TestBoard {
  owner: Client;
  projectId: string;
  agent(name: string, role?: 'admin' | 'member' | 'viewer'): Promise<Client & { principal: string }>;
}

export async function newBoard(base: string): Promise<TestBoard> {
  const { client: owner } = await signedUp(base);
  const projectId = (await owner.get('/api/projects')).body.projects[0].projectId as string;
  return {
    owner,
    projectId,
    async agent(name, role = 'member') {
      const res = await owner.post('/api/accounts/tokens', { name, scope: 'workspace', projectId, role });
      if (res.status !== 201) throw new Error(`token: ${res.text}`);
      return Object.assign(new Client(base, { authorization: `Bearer ${res.body.secret}` }), {
        principal: `agent:${res.body.token.agentId}`,
      });
    },
  };
}

export const head = (n: number): string => n.toString(16).padStart(7, '0').repeat(2);
export const digest = (c: string): string => `sha256:${c.repeat(64).slice(0, 64)}`;
