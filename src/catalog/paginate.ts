import { invalid } from '../errors.js';

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

export interface PageQuery {
  limit?: number;
  startingAfter?: string;
}

export const DEFAULT_PAGE_SIZE = 20;

/**
 * Cursor pagination over an insertion-ordered sequence: the cursor is the id of the last
 * item seen, so pages stay stable while new items are appended.
 */
export function paginate<T extends { id: string }>(
  items: Iterable<T>,
  query: PageQuery,
  keep: (item: T) => boolean = () => true,
): Page<T> {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  let started = query.startingAfter === undefined;
  const data: T[] = [];
  for (const item of items) {
    if (!started) {
      started = item.id === query.startingAfter;
      continue;
    }
    if (!keep(item)) continue;
    if (data.length === limit) return { data, hasMore: true };
    data.push(item);
  }
  if (!started) throw invalid(`startingAfter ${query.startingAfter} is not an item of this list`);
  return { data, hasMore: false };
}
