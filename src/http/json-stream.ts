/**
 * A JSON value's text in pieces, joined exactly JSON.stringify's: an object's top-level arrays
 * (a page's `data`) one element at a time, every other value whole. A large answer is then
 * written as the client takes it, one piece behind another, instead of built whole as one
 * string and left in a socket's buffer (contract v5, "Shared under load").
 */
export function* jsonPieces(value: unknown): Generator<string, void, undefined> {
  if (!isPlainObject(value)) {
    yield JSON.stringify(value) ?? 'null';
    return;
  }
  let first = true;
  yield '{';
  for (const key of Object.keys(value)) {
    const field: unknown = value[key];
    // What JSON.stringify leaves out of an object.
    if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (Array.isArray(field) && !hasToJson(field)) yield* arrayPieces(field);
    else yield JSON.stringify(field) ?? 'null';
  }
  yield '}';
}

function* arrayPieces(items: readonly unknown[]): Generator<string, void, undefined> {
  yield '[';
  for (let i = 0; i < items.length; i++) {
    // In an array, what JSON.stringify leaves out of an object is null.
    const text = JSON.stringify(items[i]) ?? 'null';
    yield i === 0 ? text : `,${text}`;
  }
  yield ']';
}

/** An object JSON.stringify writes key by key: a toJSON would make it something else. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !hasToJson(value);
}

const hasToJson = (value: object): boolean => 'toJSON' in value && typeof value.toJSON === 'function';
