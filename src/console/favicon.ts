/**
 * The console's icon, inline (a data: URL): nothing more to serve, and a browser that
 * finds a <link rel="icon"> does not ask for /favicon.ico, which the API would answer 404.
 */
const SVG =
  "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'>" +
  "<rect width='32' height='32' rx='7' fill='%231d4ed8'/>" +
  "<rect x='5' y='9' width='22' height='15' rx='2.5' fill='%23fff'/>" +
  "<rect x='5' y='12' width='22' height='3.5' fill='%23111827'/>" +
  "<rect x='8' y='19' width='8' height='2' rx='1' fill='%231d4ed8'/>" +
  '</svg>';

export const FAVICON = `data:image/svg+xml,${SVG}`;
