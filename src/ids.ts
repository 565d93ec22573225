const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Resource and user ids are UUIDs; anything else cannot exist, and must not reach a uuid parameter (SQLSTATE 22P02). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
