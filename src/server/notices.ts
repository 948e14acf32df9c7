// Every notice a node's bus carries. Each feature declares the notices it sends beside its own
// code and hears them through its `hears` table; this union is the one place that names them all.
import type { MembershipNotice, RevokedNotice } from '../auth/access-notices.js';
import type { RecordsChangedNotice } from '../auth/identity-cache.js';
import type { AllowlistChangedNotice } from '../admin/allowlist.js';
import type { NodeFiguresNotice } from '../admin/utilization.js';
import type { LeaseEndedNotice, LeaseExpiringNotice, PresenceNotice, ShoutNotice } from '../board/notices.js';
import type { ResolutionNote } from '../errors/observed-resolution.js';

export type Notice =
  | RevokedNotice
  | MembershipNotice
  | ShoutNotice
  | PresenceNotice
  | LeaseExpiringNotice
  | LeaseEndedNotice
  | RecordsChangedNotice
  | AllowlistChangedNotice
  | NodeFiguresNotice
  | ResolutionNote;
