import type { Db } from '../../db/client.js';
import type { UsageReader } from '../reader.js';
import { prismaReader } from './prisma-reader.js';
import { sqliteFileOf, sqliteReader } from './sqlite-reader.js';

const readers = new WeakMap<Db, Promise<UsageReader>>();

/** The reader for a database, made once per client. */
export function usageReader(db: Db): Promise<UsageReader> {
  let reader = readers.get(db);
  if (!reader) {
    reader = chooseReader(db);
    readers.set(db, reader);
  }
  return reader;
}

async function chooseReader(db: Db): Promise<UsageReader> {
  const file = await sqliteFileOf(db);
  return file ? sqliteReader(file) : prismaReader(db);
}
