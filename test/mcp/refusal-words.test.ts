// A refusal as a tool error says what happened in words: the item machine's refusals carry only
// their code as message ("W-1 (awaiting_verify): VERIFY_NOT_INDEPENDENT"), so the code's meaning
// takes its place; over /mcp, an agent that worked an item and then claims to verify it reads why.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RefusalCode } from '../../machines/item-types.js';
import { ERRORS } from '../../src/errors/registry.js';
import { BoardApiError } from '../../src/mcp/client.js';
import { toolError } from '../../src/mcp/results.js';
import { head, newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { closeAgents, httpAgent, refusal, textOf } from './agents.js';

/** Every code the item machine refuses with (the record makes the list whole: a new code fails typecheck). */
const MACHINE_REFUSALS = Object.keys({
  LEASE_NOT_HELD: true,
  LEASE_EXPIRED: true,
  ITEM_NOT_READY: true,
  VERIFY_NOT_INDEPENDENT: true,
  HEAD_MISMATCH: true,
  EVIDENCE_EXISTS: true,
  FINDING_REQUIRED: true,
  NOT_SUBMITTER: true,
} satisfies Record<RefusalCode, true>) as RefusalCode[];

/** The error the client makes of the board's answer to a machine refusal (machines/board-commands.ts). */
const machineRefusal = (code: RefusalCode): BoardApiError =>
  new BoardApiError({
    status: ERRORS[code].status,
    code,
    message: `W-1 (claimed): ${code}`,
    meaning: ERRORS[code].meaning,
    fix: ERRORS[code].fix,
    details: { workId: 'W-1', state: 'claimed' },
  });

describe('a refusal as a tool error', () => {
  it.each(MACHINE_REFUSALS)('says in words what %s means instead of repeating the code', (code) => {
    const result = toolError([], machineRefusal(code));
    const text = (result.content[0] as { text: string }).text;
    const [first, ...rest] = text.split('\n');
    expect(first).toBe(`REFUSED ${code} (${ERRORS[code].status}): W-1 (claimed): ${ERRORS[code].meaning}`);
    expect(text.split(code).length - 1).toBe(1); // the code once, on the first line
    expect(rest).toEqual([`fix: ${ERRORS[code].fix}`, 'details: {"workId":"W-1","state":"claimed"}']);
    expect((result.structuredContent as { error: { message: string } }).error.message).toBe(
      `W-1 (claimed): ${ERRORS[code].meaning}`,
    );
  });

  it('keeps a message that says more than its code, with the meaning beside it', () => {
    const error = new BoardApiError({
      status: 409,
      code: 'NOTHING_READY',
      message: 'Nothing is ready for work.',
      meaning: ERRORS.NOTHING_READY.meaning,
      fix: ERRORS.NOTHING_READY.fix,
    });
    expect((toolError([], error).content[0] as { text: string }).text.split('\n')).toEqual([
      'REFUSED NOTHING_READY (409): Nothing is ready for work.',
      `meaning: ${ERRORS.NOTHING_READY.meaning}`,
      `fix: ${ERRORS.NOTHING_READY.fix}`,
    ]);
  });
});

describe('over /mcp', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(async () => {
    await srv.stop();
  });
  afterEach(closeAgents);

  it('tells an agent that worked an item why it may not verify it, not VERIFY_NOT_INDEPENDENT twice', async () => {
    const board = await newBoard(srv.url);
    const worker = await board.agent('worker');
    const agent = await httpAgent(srv.url, worker.defaults.authorization!.slice('Bearer '.length));
    await agent.ok('create_items', { items: [{ title: 'gated', verify: 'required' }] });
    const { lease } = await agent.ok('claim_work', {});
    await agent.ok('submit_work', { leaseId: lease.leaseId, head: head(5) });

    const own = await agent.call('claim_work', { workId: 'W-1', purpose: 'verify' });
    expect(own.isError).toBe(true);
    expect(refusal(own)).toMatchObject({
      code: 'VERIFY_NOT_INDEPENDENT',
      status: 403,
      message: `W-1 (awaiting_verify): ${ERRORS.VERIFY_NOT_INDEPENDENT.meaning}`,
    });
    const text = textOf(own, 0);
    expect(text).toMatch(/^REFUSED VERIFY_NOT_INDEPENDENT \(403\): W-1 \(awaiting_verify\): The verifier is /);
    expect(text.match(/VERIFY_NOT_INDEPENDENT/g)).toHaveLength(1);
    expect(text).toContain(`fix: ${ERRORS.VERIFY_NOT_INDEPENDENT.fix}`);
  });
});
