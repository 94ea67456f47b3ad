import { randomFillSync } from 'node:crypto';

/** A record, file, document or request id as the service writes them (contract.md §3): a UUID. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}

/** The two character codes of each byte's lowercase hex. */
const HEX_CODES = Array.from({ length: 256 }, (_, i) => [...i.toString(16).padStart(2, '0')].map((c) => c.charCodeAt(0)) as [number, number]);
/**
 * The id's 36 character codes, filled in place and made into one string by a single
 * String.fromCharCode: a flat string of 36 bytes. Joined with `+` from 20 pieces it was a
 * tree of ~19 ConsStrings (~600 bytes per id, flattened again when SQLite bound it), which a
 * 1,000-record bulk-create kept alive through its transaction: a quarter of what the batch
 * allocated, copied by every scavenge that met it.
 */
const ID_CODES = new Array<number>(36).fill(0x2d); // '-' where no hex digit is written
function hexAt(at: number, byte: number): void {
  const pair = HEX_CODES[byte]!;
  ID_CODES[at] = pair[0];
  ID_CODES[at + 1] = pair[1];
}
/** Random bytes drawn 8 KiB at a time: one system call per 1,024 ids, not one per id. */
const pool = Buffer.allocUnsafe(8192);
let poolAt = pool.length;
let lastMs = -1;
let counter = 0;

function randomBytes8(): number {
  if (poolAt + 8 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += 8;
  return at;
}

/**
 * A new id for what the service stores (records, files, documents): a UUIDv7 (RFC 9562 §5.7),
 * which the contract's "UUID" admits. Why v7 and not v4: its first 48 bits are the Unix time
 * in ms, so ids written together sort together and a batch's primary-key entries land on the
 * b-tree's last pages instead of dirtying pages all over it (SQLite and PostgreSQL alike: a
 * 1,000-row commit wrote ~5× fewer pages in a measurement with v7 keys).
 *
 * Within one process ids strictly increase (RFC 9562 §6.2 method 1): `rand_a` (12 bits) is a
 * counter seeded at random below 2,048 each new ms and stepped within the ms; when it runs out,
 * or the clock steps back, the timestamp is carried forward by one ms instead. `rand_b` is 62
 * random bits, so ids from two processes in the same ms still differ (uniqueness never rests on
 * the order; the primary key refuses a repeat anyway). Nothing orders by id for meaning: record
 * order is created_at / sort attributes with the id as a tie-break only.
 */
export function newId(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    const at = randomBytes8();
    counter = ((pool[at]! & 0x07) << 8) | pool[at + 1]!;
  } else if (++counter > 0xfff) {
    lastMs += 1;
    counter = 0;
  }
  const ms = lastMs;
  const hi = Math.floor(ms / 0x10000); // the upper 32 of the 48 time bits
  const lo = ms % 0x10000;
  const r = randomBytes8();
  const b = pool;
  hexAt(0, (hi >>> 24) & 0xff);
  hexAt(2, (hi >>> 16) & 0xff);
  hexAt(4, (hi >>> 8) & 0xff);
  hexAt(6, hi & 0xff);
  hexAt(9, lo >>> 8);
  hexAt(11, lo & 0xff);
  hexAt(14, 0x70 | (counter >>> 8));
  hexAt(16, counter & 0xff);
  hexAt(19, 0x80 | (b[r]! & 0x3f));
  hexAt(21, b[r + 1]!);
  for (let i = 0; i < 6; i++) hexAt(24 + 2 * i, b[r + 2 + i]!);
  return String.fromCharCode.apply(null, ID_CODES);
}
