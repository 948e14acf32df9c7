// Doctrine on a board (DOMAIN.md "Doctrine and spec"): who may do what, and the reads. Members
// propose and agree, admins ratify, reject, set the level and set an expected answer digest;
// agents take blind tests. Every change is decided in the board's actor (machines/doctrine-commands.ts).
import type { Board, BoardItem } from '../../machines/board.js';
import { doctrineView, type DoctrineView } from '../../machines/board-entries.js';
import type { DoctrineAction, DoctrineReply } from '../../machines/doctrine-commands.js';
import type { DoctrineLevel, DoctrineStatus } from '../../machines/doctrine-machine.js';
import { atLeast } from '../auth/project-selection.js';
import { AppError } from '../errors/app-error.js';
import type { RequestContext } from '../request-context.js';
import type { BoardAccess } from './board-access.js';

export const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;

export interface NewDoctrine {
  slug: string;
  title: string;
  text: string;
  expectedDigest?: string;
}

/**
 * A slug from a path: one that cannot name an entry is answered like a missing one, and at the same
 * point (after the role and the token's groups are checked, as an entry's existence is).
 */
function slugParam(raw: string | undefined): string {
  if (!raw || !SLUG.test(raw))
    throw new AppError(
      'DOCTRINE_NOT_FOUND',
      'Doctrine slugs are 1 to 64 lowercase letters, digits and dashes, starting with a letter or digit.',
      { slug: raw ?? null },
    );
  return raw;
}

/** The doctrine operations of one request's board. */
export class DoctrineDesk {
  constructor(private readonly boards: BoardAccess) {}

  async list(ctx: RequestContext): Promise<{ entries: DoctrineView[] }> {
    const call = this.boards.enter(ctx, 'viewer', 'doctrine');
    const { board } = await call.actor.read();
    return { entries: [...board.doctrine.values()].map(doctrineView) };
  }

  /** Members propose; only an admin may give the expected answer digest (ROLE_REQUIRED otherwise, nothing written). */
  propose(ctx: RequestContext, input: NewDoctrine): Promise<DoctrineView> {
    const call = this.boards.enter(ctx, 'member', 'doctrine');
    if (input.expectedDigest !== undefined && !atLeast(call.role, 'admin')) {
      throw new AppError(
        'ROLE_REQUIRED',
        `Setting expectedDigest needs the admin role on the board; you have ${call.role}.`,
        { role: call.role, needed: 'admin', field: 'body.expectedDigest' },
      );
    }
    return this.boards.ask(call, {
      kind: 'propose-doctrine',
      input: { slug: input.slug, title: input.title, text: input.text, expectedDigest: input.expectedDigest ?? null },
      actor: call.principal,
    });
  }

  agree(ctx: RequestContext, slug: string | undefined): Promise<DoctrineReply> {
    return this.act(ctx, 'member', slug, { type: 'AGREE' });
  }

  ratify(ctx: RequestContext, slug: string | undefined, expectedDigest: string | undefined): Promise<DoctrineReply> {
    return this.act(ctx, 'admin', slug, {
      type: 'RATIFY',
      ...(expectedDigest === undefined ? {} : { expectedDigest }),
    });
  }

  reject(ctx: RequestContext, slug: string | undefined, reason: string | undefined): Promise<DoctrineReply> {
    return this.act(ctx, 'admin', slug, { type: 'REJECT', ...(reason === undefined ? {} : { reason }) });
  }

  level(ctx: RequestContext, slug: string | undefined, level: DoctrineLevel): Promise<DoctrineReply> {
    return this.act(ctx, 'admin', slug, { type: 'SET_LEVEL', level });
  }

  blindTest(ctx: RequestContext, slug: string | undefined, answerDigest: string): Promise<DoctrineReply> {
    return this.act(ctx, 'member', slug, { type: 'BLIND_TEST', answerDigest });
  }

  /** `slug` as the path gave it: checked once the caller may act at all. */
  private act(
    ctx: RequestContext,
    need: 'member' | 'admin',
    slug: string | undefined,
    action: DoctrineAction,
  ): Promise<DoctrineReply> {
    const call = this.boards.enter(ctx, need, 'doctrine');
    return this.boards.ask(call, { kind: 'doctrine', slug: slugParam(slug), action, actor: call.principal });
  }
}

export interface DoctrineLink {
  slug: string;
  /** Null for a slug with no entry on the board (an item imported with links its board never held). */
  level: DoctrineLevel | null;
  status: DoctrineStatus | null;
}

/** The level and status of each doctrine entry an item links, in the item's order. */
export function doctrineLinksOf(board: Board, item: Pick<BoardItem, 'doctrine'>): DoctrineLink[] {
  return item.doctrine.map((slug) => {
    const entry = board.doctrine.get(slug);
    return { slug, level: entry?.life.level ?? null, status: entry?.status ?? null };
  });
}
