/** A schema issue as zod reports it. */
export type Issue = { path: readonly PropertyKey[]; message: string };

/**
 * The human-readable message a 400 carries in `error` (spec: request validation failures), e.g.
 * `slug: must be lowercase …; priceUsd: has more than six decimal places` (at most five issues).
 */
export function describeIssues(issues: readonly Issue[]): string {
  const shown = issues
    .slice(0, 5)
    .map((issue) => (issue.path.length ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message));
  if (issues.length > shown.length) shown.push(`and ${issues.length - shown.length} more`);
  return shown.join('; ') || 'Invalid request';
}
