// Turns zod failures into one INVALID_INPUT message that names the field at fault.
import type { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import { describeIssue } from '../errors/validation-issue.js';

export function parseWith<T>(schema: z.ZodType<T>, value: unknown, root: 'body' | 'query' | 'arguments'): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const first = result.error.issues[0]!;
  const path = [root, ...first.path.map(String), ...(first.code === 'unrecognized_keys' ? first.keys.slice(0, 1) : [])];
  throw new AppError('INVALID_INPUT', describeIssue(first, root), { field: path.join('.') });
}
