// The board's dependency graph, laid out with dagre and drawn as SVG (loaded only when opened:
// dagre stays out of the board page's first load). It is laid out again only when the items drawn
// or their links change; a live update that only moves an item (its state, its title) recolours
// and relabels the drawing in place. Drawn at most at its natural size, in a scrolling pane.
import { Graph as Layout, layout } from '@dagrejs/dagre';
import { useMemo, useRef } from 'preact/hooks';
import type { Item } from '../types.js';

interface Point {
  x: number;
  y: number;
}

const NODE_W = 170;
const NODE_H = 44;
/** Beyond this many items the drawing shows the ones with dependencies first. */
const MAX_NODES = 400;
const FILL: Record<string, string> = {
  pending: '#eef1f6',
  ready: '#e3ecff',
  claimed: '#fff4e0',
  awaiting_verify: '#f3e8ff',
  verifying: '#f3e8ff',
  done: '#e3f5ea',
  blocked: '#fdecea',
  cancelled: '#f0f0f0',
};

/** What the layout depends on: each item and its links (not its state or title). */
const shapeOf = (items: readonly Item[]) => items.map((i) => `${i.workId}<${i.dependsOn.join(',')}`).join(' ');

function layOut(items: readonly Item[]) {
  const linked = new Set(items.flatMap((i) => (i.dependsOn.length ? [i.workId, ...i.dependsOn] : [])));
  const chosen = [...items]
    .sort((a, b) => Number(linked.has(b.workId)) - Number(linked.has(a.workId)))
    .slice(0, MAX_NODES);
  const present = new Set(chosen.map((i) => i.workId));
  const g = new Layout();
  g.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 48, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const item of chosen) g.setNode(item.workId, { width: NODE_W, height: NODE_H });
  for (const item of chosen) for (const dep of item.dependsOn) if (present.has(dep)) g.setEdge(dep, item.workId);
  layout(g);
  const size = g.graph();
  return {
    width: size.width ?? 0,
    height: size.height ?? 0,
    nodes: chosen.map((item) => ({ workId: item.workId, ...(g.node(item.workId) as Point) })),
    edges: (g.edges() as { v: string; w: string }[]).map((e): { key: string; points: Point[] } => ({
      key: `${e.v}->${e.w}`,
      points: (g.edge(e) as { points: Point[] }).points,
    })),
    hidden: items.length - chosen.length,
  };
}

export default function DependencyGraph({ projectId, items }: { projectId: string; items: Item[] }) {
  const shape = useMemo(() => shapeOf(items), [items]);
  const layouts = useRef(0);
  const drawn = useMemo(() => {
    layouts.current++;
    return layOut(items);
    // (Laid out from the items of the render whose shape changed: a later render only recolours.)
  }, [shape]);
  const byId = useMemo(() => new Map(items.map((i) => [i.workId, i])), [items]);

  if (items.length === 0) return <p class="muted">No items yet.</p>;
  return (
    <div class="graph" data-layouts={layouts.current}>
      {drawn.hidden > 0 ? (
        <p class="muted">
          Showing {MAX_NODES} of {items.length} items.
        </p>
      ) : null}
      <div class="graph-pane">
        <svg
          viewBox={`0 0 ${drawn.width} ${drawn.height}`}
          width={drawn.width}
          height={drawn.height}
          role="img"
          aria-label="Dependency graph"
        >
          <defs>
            <marker
              id="arrow"
              viewBox="0 0 10 10"
              refX="10"
              refY="5"
              markerWidth="6"
              markerHeight="6"
              orient="auto-start-reverse"
            >
              <path d="M 0 0 L 10 5 L 0 10 z" fill="#98a2b3" />
            </marker>
          </defs>
          {drawn.edges.map((e) => (
            <polyline
              key={e.key}
              points={e.points.map((p: Point) => `${p.x},${p.y}`).join(' ')}
              fill="none"
              stroke="#98a2b3"
              stroke-width="1.5"
              marker-end="url(#arrow)"
            />
          ))}
          {drawn.nodes.map(({ workId, x, y }) => {
            const item = byId.get(workId);
            return item ? (
              <a href={`/boards/${projectId}/items/${item.workId}`} key={item.workId}>
                <rect
                  x={x - NODE_W / 2}
                  y={y - NODE_H / 2}
                  width={NODE_W}
                  height={NODE_H}
                  rx="6"
                  fill={FILL[item.state] ?? '#fff'}
                  stroke="#c5ccd6"
                />
                <text x={x - NODE_W / 2 + 8} y={y - 4} font-size="11" fill="#5d6778">
                  {item.workId} · {item.state.replace('_', ' ')}
                </text>
                <text x={x - NODE_W / 2 + 8} y={y + 12} font-size="12" fill="#1c2330">
                  {item.title.length > 24 ? `${item.title.slice(0, 23)}…` : item.title}
                </text>
              </a>
            ) : null;
          })}
        </svg>
      </div>
    </div>
  );
}
