// The work graph's rules for items being added or edited: parents and dependencies on this board,
// none on itself or on its own ancestor or descendant, and no cycle among them.
import type { Board, BoardItem } from './board.js';

export type GraphError = {
  code: 'CONFLICTING_DEPENDENCIES' | 'CROSS_PROJECT_FOLD' | 'CROSS_PROJECT_PARENT';
  message: string;
};

export type GraphNode = Pick<BoardItem, 'dependsOn' | 'parentId'>;

/** Ancestors through parentId, nearest first. */
function ancestors(node: (id: string) => GraphNode | undefined, workId: string): string[] {
  const out: string[] = [];
  for (let at = node(workId)?.parentId ?? null; at && !out.includes(at); at = node(at)?.parentId ?? null) out.push(at);
  return out;
}

/** Checks dependencies and parents of `candidates` against the board plus the candidates themselves. */
export function checkGraph(board: Board, candidates: Record<string, GraphNode>, without?: string): GraphError | null {
  const node = (id: string): GraphNode | undefined =>
    id === without && !(id in candidates) ? undefined : (candidates[id] ?? board.items.get(id));
  for (const [workId, item] of Object.entries(candidates)) {
    if (item.parentId !== null && !node(item.parentId))
      return { code: 'CROSS_PROJECT_PARENT', message: `${workId}: parent ${item.parentId} is not on this board.` };
    for (const dep of item.dependsOn) {
      if (!node(dep))
        return { code: 'CROSS_PROJECT_FOLD', message: `${workId}: dependency ${dep} is not on this board.` };
      if (dep === workId) return { code: 'CONFLICTING_DEPENDENCIES', message: `${workId} depends on itself.` };
      if (ancestors(node, workId).includes(dep) || ancestors(node, dep).includes(workId)) {
        return {
          code: 'CONFLICTING_DEPENDENCIES',
          message: `${workId} cannot depend on its own ancestor or descendant ${dep}.`,
        };
      }
    }
    if (ancestors(node, workId).includes(workId))
      return { code: 'CONFLICTING_DEPENDENCIES', message: `${workId}'s parents form a cycle.` };
  }
  // A cycle anywhere among the dependencies reachable from the candidates (depth-first, colouring).
  const colour = new Map<string, 1 | 2>();
  const visit = (id: string): string | null => {
    if (colour.get(id) === 2) return null;
    if (colour.get(id) === 1) return id;
    colour.set(id, 1);
    for (const dep of node(id)?.dependsOn ?? []) {
      const cycle = visit(dep);
      if (cycle) return cycle;
    }
    colour.set(id, 2);
    return null;
  };
  for (const id of Object.keys(candidates)) {
    const cycle = visit(id);
    if (cycle) return { code: 'CONFLICTING_DEPENDENCIES', message: `The dependencies of ${cycle} form a cycle.` };
  }
  return null;
}
