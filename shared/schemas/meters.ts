import { z } from 'zod';
import { idSchema, meterKey, name, timestamp } from './fields.js';

export const meterId = idSchema('meter');

const unit = z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters').meta({ example: 'request' });

export const meter = z
  .object({
    id: meterId,
    serviceId: idSchema('service'),
    key: z.string().meta({ description: 'Unique within the service; usage items name it as meterSlug' }),
    unit: z.string(),
    name: z.string().nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Meter' });

export const createMeterInput = z.strictObject({
  serviceId: idSchema('service'),
  key: meterKey,
  unit,
  name: name.optional(),
});

export const updateMeterInput = z.strictObject({
  meterId,
  key: meterKey.optional(),
  unit: unit.optional(),
  name: name.nullable().optional(),
});
