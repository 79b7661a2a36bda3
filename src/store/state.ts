import type { Record, State, StoredOp } from './types.js';

/** Shared by open-time replay and the compaction worker so both fold the journal the same way. */
export function applyOp(state: State, op: StoredOp): void {
  let records = state.get(op.collection);
  if (op.value === null) {
    records?.delete(op.id);
    return;
  }
  if (records === undefined) {
    records = new Map();
    state.set(op.collection, records);
  }
  records.set(op.id, op.value);
}

export function isRecord(value: unknown): value is Record {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { id?: unknown }).id === 'string'
  );
}
