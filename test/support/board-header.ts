// A board's header as the store holds it before its first commit: where the store tests begin.
import type { BoardRecord } from '../../store/ports/store.js';

export const boardHeader = (boardId: string, version = 1): BoardRecord => ({
  _id: boardId,
  version,
  nextWorkSeq: 1,
  nextFencingToken: 1,
  lastSeq: 0,
  nextDeadline: null,
});
