import { z } from 'zod';
import { description, idSchema, name, slug, timestamp } from './fields.js';

export const serviceId = idSchema('service');

export const service = z
  .object({
    id: serviceId,
    sellerId: idSchema('seller'),
    name: z.string(),
    slug: z.string().meta({ description: 'Unique within the seller; usage reports name it as serviceSlug' }),
    description: z.string().nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Service' });

export const createServiceInput = z.strictObject({
  sellerId: idSchema('seller'),
  name,
  slug,
  description: description.optional(),
});

export const updateServiceInput = z.strictObject({
  serviceId,
  name: name.optional(),
  slug: slug.optional(),
  description: description.nullable().optional(),
});
