/** bulk-delete takes 1..1000 ids (contract.md §3). */
export const MAX_BULK = 1000;
/**
 * bulk-create / bulk-update take up to 10,000 records: issue 3 "Performance" needs
 * "bulk-create of 10,000 records in one call"; the 8 MB body limit still bounds the size.
 */
export const MAX_BULK_WRITE = 10_000;
/**
 * A page of records, search hits or history entries: 1..500, 50 when not asked
 * (contract.md §3 "limit"). The route schemas and the store both read these, so a limit
 * the route accepts is one the store serves.
 */
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;
