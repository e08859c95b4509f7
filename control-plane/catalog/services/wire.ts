import type { z } from 'zod';
import type { Service } from '../../../generated/prisma/sqlite/client.js';
import type { service } from '../../../shared/schemas/services.js';

export function toServiceWire(row: Service): z.infer<typeof service> {
  return {
    id: row.id,
    sellerId: row.sellerId,
    name: row.name,
    slug: row.slug,
    description: row.description,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
