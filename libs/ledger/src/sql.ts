import type { DataSource } from 'typeorm';

/** The rows of a read through the data source (a pooled connection for the one statement). */
export function select<R>(dataSource: DataSource, sql: string, params: readonly unknown[] = []): Promise<R[]> {
  return dataSource.query(sql, [...params]);
}

/** A table's name quoted for SQL: partition names come from the database's own view, but are quoted all the same. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
