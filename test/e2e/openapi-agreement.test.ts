// Places where /docs/openapi.json once disagreed with behaviour, each checked on both sides: what the
// document says, and what the server does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect-error.js';

let srv: TestServer;
let doc: any; // eslint-disable-line @typescript-eslint/no-explicit-any
beforeAll(async () => {
  srv = await startTestServer();
  doc = (await new Client(srv.url).get('/docs/openapi.json')).body;
});
afterAll(async () => {
  await srv.stop();
});

const bodyOf = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json'].schema;

/** A signed-up account's client and a member token for its default board. */
async function board() {
  const { client } = await signedUp(srv.url);
  const projectId = (await client.get('/api/account/profile')).body.projectId as string;
  const issued = await client.post('/api/accounts/tokens', { name: 'agent', scope: 'workspace', projectId });
  return { client, agent: new Client(srv.url, { authorization: `Bearer ${issued.body.secret}` }) };
}

describe('the document agrees with behaviour', () => {
  it('shows `head` as never allowed where a body refuses it, and the server refuses it', async () => {
    const refusing = [
      ['/api/items', 'post'],
      ['/api/items/{workId}', 'patch'],
      ['/api/items/{workId}/comments', 'post'],
      ['/api/items/{workId}/progress', 'post'],
      ['/api/claim', 'post'],
    ] as const;
    for (const [path, method] of refusing)
      expect(bodyOf(path, method).properties.head, `${method} ${path}`).toMatchObject({ not: {} });
    expect(bodyOf('/api/items/batch', 'post').properties.items.items.properties.head).toMatchObject({ not: {} });
    expect(bodyOf('/api/submit', 'post').properties.head).toMatchObject({
      type: 'string',
      pattern: expect.any(String),
    });
    const { agent } = await board();
    expectError(await agent.post('/api/items', { title: 'x', head: 'abcdef0' }), 400, 'COMMIT_ID_FORBIDDEN');
    expectError(await agent.post('/api/claim', { head: 'abcdef0' }), 400, 'COMMIT_ID_FORBIDDEN');
  });

  it('documents the 404 that progress answers on a path that names no work id', async () => {
    expect(JSON.stringify(doc.paths['/api/items/{workId}/progress'].post.responses['404'])).toContain('ITEM_NOT_FOUND');
    const { agent } = await board();
    expectError(await agent.post('/api/items/nope/progress', { leaseId: 'lease_x' }), 404, 'ITEM_NOT_FOUND');
  });

  it('gives project names and defaultProjectId a minimum length of 1, and refuses the empty string with the contract’s code', async () => {
    expect(bodyOf('/api/projects', 'post').properties.name).toMatchObject({ type: 'string', minLength: 1 });
    expect(bodyOf('/api/boards/{projectId}', 'patch').properties.name).toMatchObject({ type: 'string', minLength: 1 });
    expect(bodyOf('/api/account/profile', 'patch').properties.defaultProjectId.anyOf).toContainEqual({
      type: 'string',
      minLength: 1,
    });
    const { client } = await board();
    expectError(await client.post('/api/projects', { name: '' }), 400, 'INVALID_PROJECT_NAME');
    expectError(
      await client.request('PATCH', '/api/account/profile', { json: { defaultProjectId: '' } }),
      400,
      'INVALID_PROJECT_ID',
    );
  });

  it('documents no defaults for an item edit, and an edit leaves the fields it does not name alone', async () => {
    const patch = bodyOf('/api/items/{workId}', 'patch');
    for (const [name, schema] of Object.entries(patch.properties)) expect(schema, name).not.toHaveProperty('default');
    const { agent } = await board();
    const created = await agent.post('/api/items', {
      title: 'one',
      description: 'kept',
      priority: 0,
      labels: ['api'],
      verify: 'required',
    });
    expect(created.status).toBe(201);
    const edited = await agent.request('PATCH', `/api/items/${created.body.workId}`, { json: { title: 'renamed' } });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      title: 'renamed',
      description: 'kept',
      priority: 0,
      labels: ['api'],
      verify: 'required',
    });
  });
});
