import type { z } from 'zod';

/** A body read into its typed shape, or the human-readable message a 400 carries. */
export type ParseResult<T> = { ok: true; value: T } | { ok: false; message: string };

/** The first problem, as `path: message`, for a human reading hub's delivery log. */
export function describe(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const path = issue.path.length ? issue.path.join('.') : 'body';
  return `${path}: ${issue.message}`;
}
