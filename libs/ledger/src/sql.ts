import type { DataSource } from 'typeorm';

/** The rows of a read through the data source (a pooled connection for the one statement). */
export function select<R>(dataSource: DataSource, sql: string, params: readonly unknown[] = []): Promise<R[]> {
  return dataSource.query(sql, [...params]);
}
