/**
 * Reads bounded in bytes as well as in rows. A row of the ledger is as large as what a
 * caller managed to store in it: rows written before names were bounded hold multi-MB names, and a
 * page of 1,000 of them, built whole by the driver, killed the API (a 256 MiB heap) and crash-looped
 * the projection worker. So every history read and every projection step asks PostgreSQL to stop
 * early: rows are taken in order while the bytes before them stay under the budget, which always
 * takes the first row (however large) and never more than the row bound. A page cut short by its
 * budget still says where the next one starts.
 */

/** The most one page of a history read (events, decisions, reservations, definition changes) holds, as PostgreSQL prints its rows. */
export const HISTORY_PAGE_MAX_BYTES = 1024 * 1024;

export interface ByteBoundedRead {
  /**
   * A SELECT of the candidate rows, in page order: every column the read needs, plus
   * `stored_bytes`, what the row's large columns take as stored (`pg_column_size` of each: read
   * from their TOAST pointers, nothing decompressed), and whatever `order` names; limited to the
   * row bound (plus one, for a page that must say whether more follow).
   */
  readonly candidates: string;
  /** The page order over the candidates' columns, as `c.<column>` (`c.page_key DESC`). */
  readonly order: string;
  /** At most this many rows. */
  readonly rowsMax: number;
  /** Rows are taken while the bytes before them are under this; the first always is. */
  readonly bytesMax: number;
}

/** The columns a byte-bounded read adds to the candidates' (each row carries them). */
export interface ByteBoundedColumns {
  /** How many candidates there were: more than the page took means another page follows. */
  readonly candidates: string | number;
  /** The row's size as PostgreSQL prints it (what the driver receives). */
  readonly row_bytes: number;
}

/**
 * The statement of a byte-bounded read, in two passes so that the cost of measuring stays with
 * the rows taken: first the candidates whose stored sizes before them are under the budget (cheap,
 * and compressed sizes only let more through), then of those, the ones whose printed sizes before
 * them are (each row printed once). Each pass is one window in page order.
 */
export function byteBoundedSql(read: ByteBoundedRead): string {
  const rows = Math.max(1, Math.floor(read.rowsMax));
  const bytes = Math.max(1, Math.floor(read.bytesMax));
  const running = `WINDOW w AS (ORDER BY ${read.order} ROWS UNBOUNDED PRECEDING)`;
  return `SELECT * FROM (
            SELECT c.*, row_number() OVER w AS page_row, sum(c.row_bytes) OVER w - c.row_bytes AS bytes_before
              FROM (SELECT c.*, octet_length(c::text) AS row_bytes
                      FROM (SELECT c.*, sum(c.stored_bytes) OVER w - c.stored_bytes AS stored_before, count(*) OVER () AS candidates
                              FROM (${read.candidates}) AS c ${running}) AS c
                     WHERE c.stored_before < ${bytes}) AS c ${running}) AS c
           WHERE c.page_row <= ${rows} AND c.bytes_before < ${bytes}
           ORDER BY c.page_row`;
}

/** Whether the candidates ran past the page taken: by the row bound (the extra candidate) or by the byte budget. */
export function pageCutShort(rows: readonly ByteBoundedColumns[]): boolean {
  const first = rows[0];
  return first !== undefined && Number(first.candidates) > rows.length;
}
