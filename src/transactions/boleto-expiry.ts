/** The end of the due date in Brazil (UTC−3, no daylight saving since 2019), in ms. */
export function endOfDueDate(dueDate: string): number {
  return Date.parse(`${dueDate}T23:59:59.999-03:00`);
}
