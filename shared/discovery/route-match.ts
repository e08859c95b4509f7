import type { DiscoveryCatalog } from '../contract.js';

type DiscoveredRoute = DiscoveryCatalog['routes'][number];

/**
 * The declared route a request is a call of: the same method, and a path that fills the template's
 * `{parameters}` with one segment each. A literal segment wins over a parameter where two match
 * (`/forecast/today` before `/forecast/{city}`), as the seller would mean it.
 */
export function matchRoute(routes: readonly DiscoveredRoute[], method: string, path: string): DiscoveredRoute | undefined {
  const segments = path.split('/');
  let best: { route: DiscoveredRoute; literals: number } | undefined;
  for (const entry of routes) {
    if (entry.route.method !== method) continue;
    const literals = literalMatches(entry.route.path.split('/'), segments);
    if (literals !== undefined && (!best || literals > best.literals)) best = { route: entry, literals };
  }
  return best?.route;
}

/** How many literal segments of the template match, or undefined when the path is not one of it. */
function literalMatches(template: string[], segments: string[]): number | undefined {
  if (template.length !== segments.length) return undefined;
  let literals = 0;
  for (let i = 0; i < template.length; i++) {
    const part = template[i]!;
    if (part.startsWith('{')) {
      if (!segments[i]) return undefined;
    } else if (part === segments[i]) literals++;
    else return undefined;
  }
  return literals;
}

/** The values a path gives the template's parameters. */
export function pathParamsOf(template: string, path: string): Record<string, string> {
  const values: Record<string, string> = {};
  const segments = path.split('/');
  template.split('/').forEach((part, i) => {
    if (part.startsWith('{')) values[part.slice(1, -1)] = safeDecode(segments[i] ?? '');
  });
  return values;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
