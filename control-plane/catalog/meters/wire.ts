import type { z } from 'zod';
import type { Meter } from '../../../generated/prisma/sqlite/client.js';
import type { meter } from '../../../shared/schemas/meters.js';

export function toMeterWire(row: Meter): z.infer<typeof meter> {
  return {
    id: row.id,
    serviceId: row.serviceId,
    key: row.key,
    unit: row.unit,
    name: row.name,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
