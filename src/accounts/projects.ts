// Creating a project: its record, the owner's membership and an empty board.
import { randomUUID } from 'node:crypto';
import type { ProjectRecord, Store } from '../../store/ports/store.js';

export async function provisionProject(store: Store, ownerId: string, name: string, now: number): Promise<ProjectRecord> {
  const project: ProjectRecord = { _id: randomUUID(), version: 1, name, ownerId, plan: 'free', createdAt: now, lastActivityAt: now };
  await store.projects.insert(project);
  await store.members.insert({ _id: `${project._id}:${ownerId}`, version: 1, projectId: project._id, accountId: ownerId, role: 'owner', acceptedAt: now });
  await store.boards.insert({ _id: project._id, version: 1, nextWorkSeq: 1, nextFencingToken: 1, lastSeq: 0, items: {} });
  return project;
}
