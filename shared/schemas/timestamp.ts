import { z } from 'zod';

/** A UTC timestamp in ISO 8601, as every response carries them (`2025-01-31T12:00:00.000Z`). */
export const timestamp = z.string().meta({ format: 'date-time', example: '2025-01-31T12:00:00.000Z' });

export function toTimestamp(date: Date): string {
  return date.toISOString();
}

export function toTimestampOrNull(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}
