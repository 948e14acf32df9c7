// An item on the board: the fields people set and what the lifecycle keeps.
import type { ItemLife, ItemState } from './item-types.js';

export interface ItemFields {
  title: string;
  description: string;
  type: 'task' | 'bug' | 'chore' | 'epic';
  priority: number;
  parentId: string | null;
  dependsOn: string[];
  verify: 'none' | 'required';
  maxAttempts: number;
  criteria: string[];
  doctrine: string[];
  spec: string[];
  labels: string[];
}

export interface BoardItem extends ItemFields {
  workId: string;
  /** Set by a reorder (lowest first); null for an item never reordered (DOMAIN.md "Priority chain"). */
  rank: number | null;
  state: ItemState;
  life: ItemLife;
  progress: { note: string; by: string; at: number } | null;
  /**
   * Recently ended leases, so a late holder learns why: expired, revoked (blocked, cancelled,
   * superseded, overridden, verified, rewound), or ended by the holder (submitted, released: the
   * latest only, so a repeat of that call is answered as the first was).
   */
  endedLeases: { leaseId: string; reason: string }[];
  createdAt: number;
  updatedAt: number;
  /** When it last became ready (for ready-to-done times); absent when unknown. */
  readyAt?: number;
  /** Bumps on every change of the item. */
  version: number;
}
