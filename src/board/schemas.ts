// The forms of a board's ids and digests, as every layer that reads them from outside checks them:
// the routes' inputs, and an imported board's records (src/admin/import.ts).
import { z } from 'zod';

export const WORK_ID = /^W-\d{1,9}$/;
/** A work id as a board issues it (W-<seq>, no leading zero): one seq, one id. */
export const ISSUED_WORK_ID = /^W-[1-9]\d{0,8}$/;
export const COMMIT_ID = /^[0-9a-f]{7,64}$/;
export const DIGEST = /^sha256:[a-f0-9]{64}$/;

export const WorkId = z.string().regex(WORK_ID, 'must be a work id like W-12');
export const IssuedWorkId = z.string().regex(ISSUED_WORK_ID, 'must be a work id as a board issues it, like W-12');
export const CommitId = z.string().regex(COMMIT_ID, 'must be a commit id: 7 to 64 lowercase hex characters');
export const Digest = z.string().regex(DIGEST, 'must be a digest: sha256:<64 lowercase hex>');
