// Doctrine and spec as pure board decisions (DOMAIN.md "Doctrine and spec"): each takes the board
// and the time and returns the next board, the events to log and the reply, or throws BoardError.
// Their events name no item (workId null) and carry the entry's or clause's view in their data
// (`entry`, `clause`), never the expected digest of a blind test.
import { BoardDraft, type Board } from './board.js';
import {
  clauseIdOf,
  clauseKey,
  clauseView,
  doctrineKey,
  doctrineView,
  type ClauseView,
  type DoctrineEntry,
  type DoctrineView,
  type SpecClause,
  type SpecStatus,
} from './board-entries.js';
import type { Decide, NewEvent } from './board-decision.js';
import { BoardError } from './board-error.js';
import type { DoctrineEvent, DoctrineLevel } from './doctrine-machine.js';
import { doctrineStep, initialDoctrineLife } from './doctrine-step.js';

export interface DoctrineProposal {
  slug: string;
  title: string;
  text: string;
  /** Set only by an admin (the route checks the role). */
  expectedDigest: string | null;
}

export function proposeDoctrine(input: DoctrineProposal, actor: string): Decide<DoctrineView> {
  return (board, now) => {
    if (board.doctrine.has(input.slug))
      throw new BoardError('DOCTRINE_EXISTS', `A doctrine entry "${input.slug}" is already on this board.`, {
        slug: input.slug,
        status: board.doctrine.get(input.slug)!.status,
      });
    const entry: DoctrineEntry = {
      workId: doctrineKey(input.slug),
      slug: input.slug,
      title: input.title,
      text: input.text,
      status: 'proposed',
      life: initialDoctrineLife(input.expectedDigest),
      proposedBy: actor,
      createdAt: now,
      updatedAt: now,
      version: 1,
    };
    const draft = new BoardDraft(board);
    draft.putDoctrine(entry);
    const view = doctrineView(entry);
    return {
      board: draft.finish(),
      events: [{ type: 'doctrine.proposed', actor, workId: null, data: { slug: input.slug, entry: view } }],
      reply: view,
    };
  };
}

/** A doctrine action as a route names it: the principal and the time are added here. */
export type DoctrineAction =
  | { type: 'AGREE' }
  | { type: 'RATIFY'; expectedDigest?: string }
  | { type: 'REJECT'; reason?: string }
  | { type: 'SET_LEVEL'; level: DoctrineLevel }
  | { type: 'BLIND_TEST'; answerDigest: string };

export interface DoctrineReply {
  entry: DoctrineView;
  /** AGREE from a principal that had agreed already: nothing changed, nothing logged. */
  already?: true;
  /** BLIND_TEST: whether the answer matched the expected digest. */
  result?: 'pass' | 'fail';
}

function entryOr404(board: Board, slug: string): DoctrineEntry {
  const entry = board.doctrine.get(slug);
  if (!entry) throw new BoardError('DOCTRINE_NOT_FOUND', `No doctrine entry "${slug}" on this board.`, { slug });
  return entry;
}

/** One action on one entry, through the doctrine machine. */
export function doctrineAction(slug: string, actor: string, action: DoctrineAction): Decide<DoctrineReply> {
  return (board, now) => {
    const entry = entryOr404(board, slug);
    const event = {
      ...action,
      now,
      ...(action.type === 'AGREE' || action.type === 'BLIND_TEST' ? { principal: actor } : {}),
    } as DoctrineEvent;
    const result = doctrineStep(entry.status, entry.life, event);
    if (result.kind === 'invalid')
      throw new BoardError(
        'INVALID_TRANSITION',
        `Doctrine entry "${slug}" is ${entry.status}, which does not take ${action.type}.`,
        { slug, state: entry.status, allowed: result.allowed },
      );
    if (result.kind === 'refused')
      throw new BoardError(
        result.code,
        `Doctrine entry "${slug}" has no expected answer digest; an admin sets one when ratifying.`,
        { slug },
      );
    if (result.kind === 'unchanged')
      return {
        board,
        events: [],
        reply: { entry: doctrineView(entry), ...(action.type === 'AGREE' ? { already: true as const } : {}) },
      };
    const next: DoctrineEntry = {
      ...entry,
      status: result.status,
      life: result.life,
      updatedAt: now,
      version: entry.version + 1,
    };
    const draft = new BoardDraft(board);
    draft.putDoctrine(next);
    const view = doctrineView(next);
    const events = result.emitted.map(({ type, ...data }): NewEvent => ({
      type,
      actor,
      workId: null,
      data: { slug, ...data, entry: view },
    }));
    const blind = result.emitted.find((e) => e.type === 'doctrine.blind_test');
    return { board: draft.finish(), events, reply: { entry: view, ...(blind ? { result: blind.result } : {}) } };
  };
}

/** Slugs among `slugs` with no doctrine entry on the board (an entry of any status counts: rejected ones stay and may be ratified again). */
export function missingDoctrine(board: Board, slugs: Iterable<string>): string[] {
  return [...new Set(slugs)].filter((slug) => !board.doctrine.has(slug));
}

/** A clause with the work ids of the items linking it. */
export interface LinkedClause extends ClauseView {
  linkedBy: string[];
}

export const linkedClause = (board: Board, clause: SpecClause): LinkedClause => ({
  ...clauseView(clause),
  linkedBy: itemsLinking(board, clause.clauseId),
});

export function createClause(input: { title: string; text: string }, actor: string): Decide<LinkedClause> {
  return (board, now) => {
    // Clauses are never deleted, so the count names the last one.
    const clauseId = clauseIdOf(board.spec.size + 1);
    const clause: SpecClause = {
      workId: clauseKey(clauseId),
      clauseId,
      title: input.title,
      text: input.text,
      status: 'draft',
      createdBy: actor,
      updatedBy: actor,
      createdAt: now,
      updatedAt: now,
      version: 1,
    };
    const draft = new BoardDraft(board);
    draft.putClause(clause);
    const view = clauseView(clause);
    return {
      board: draft.finish(),
      events: [{ type: 'spec.created', actor, workId: null, data: { clauseId, clause: view } }],
      reply: linkedClause(board, clause),
    };
  };
}

export interface ClausePatch {
  clauseId: string;
  /** The version the caller read: a stale one is refused and changes nothing. */
  version: number;
  title?: string;
  text?: string;
  status?: SpecStatus;
}

export function clauseOr404(board: Board, clauseId: string): SpecClause {
  const clause = board.spec.get(clauseId);
  if (!clause) throw new BoardError('SPEC_CLAUSE_NOT_FOUND', `No spec clause ${clauseId} on this board.`, { clauseId });
  return clause;
}

/** Edits a clause at its expected version; a patch that changes nothing is answered with the clause as it is. */
export function patchClause(input: ClausePatch, actor: string): Decide<LinkedClause> {
  return (board, now) => {
    const clause = clauseOr404(board, input.clauseId);
    if (input.version !== clause.version)
      throw new BoardError('VERSION_MISMATCH', `${clause.clauseId} is at version ${clause.version}.`, {
        clauseId: clause.clauseId,
        version: clause.version,
      });
    const changes = { title: input.title, text: input.text, status: input.status };
    const fields = (Object.keys(changes) as (keyof typeof changes)[]).filter(
      (k) => changes[k] !== undefined && changes[k] !== clause[k],
    );
    if (!fields.length) return { board, events: [], reply: linkedClause(board, clause) };
    const next: SpecClause = {
      ...clause,
      ...Object.fromEntries(fields.map((f) => [f, changes[f]])),
      updatedBy: actor,
      updatedAt: now,
      version: clause.version + 1,
    };
    const draft = new BoardDraft(board);
    draft.putClause(next);
    const view = clauseView(next);
    return {
      board: draft.finish(),
      events: [
        { type: 'spec.updated', actor, workId: null, data: { clauseId: clause.clauseId, fields, clause: view } },
      ],
      reply: linkedClause(board, next),
    };
  };
}

/** The work ids of the items linking a clause, in key order. */
export function itemsLinking(board: Board, clauseId: string): string[] {
  const out: string[] = [];
  board.index.specLinks.forRange([clauseId, ''], [clauseId, '\uffff'], true, (k) => void out.push(k[1]));
  return out.sort((a, b) => Number(a.slice(2)) - Number(b.slice(2)));
}

/** Items linking a retired clause, clause by clause (DOMAIN.md: reported in status). */
export function retiredSpecLinks(board: Board): { workId: string; clauseId: string }[] {
  const out: { workId: string; clauseId: string }[] = [];
  for (const clause of board.spec.values())
    if (clause.status === 'retired')
      for (const workId of itemsLinking(board, clause.clauseId)) out.push({ workId, clauseId: clause.clauseId });
  return out;
}
