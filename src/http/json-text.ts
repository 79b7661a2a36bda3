import type { Express, Response } from 'express';

/**
 * Answer bodies that keep their JSON text: a transaction polled until its status moves is
 * sent again and again unchanged, and serializing it (most of it a ~1 KB base64 QR image)
 * was a tenth of such a GET's CPU (docs/benchmarks.md). A body is registered once, frozen,
 * and serialized the first time it is sent; the text lives exactly as long as the body does.
 * One instance per sandbox: its texts are its own.
 */
export class JsonTexts {
  private readonly texts = new WeakMap<object, Buffer | null>();

  /** Registers a body whose text is kept from its first send; it cannot change after that. */
  keep<T extends object>(body: T): T {
    if (!this.texts.has(body)) this.texts.set(body, null);
    return Object.freeze(body);
  }

  /**
   * Makes the app's `res.json` send a registered body's kept text, through express's
   * documented extension point (app.response, "Overriding the Express API"). Express's own
   * `res.json` is JSON.stringify with the app's `json replacer`, `json spaces` and `json
   * escape` settings and a default Content-Type; with those settings unset, the kept text is
   * byte for byte what it writes. Installed before anything that wraps `res.json` (response
   * validation), so the wrappers still see every body.
   */
  install(app: Express): void {
    for (const setting of ['json replacer', 'json spaces', 'json escape']) {
      if (app.get(setting) !== undefined) throw new Error(`installJsonText: the app sets '${setting}', which kept texts would not follow`);
    }
    const texts = this.texts;
    const json = app.response.json;
    app.response.json = function jsonWithKeptText(this: Response, body?: unknown): Response {
      if (typeof body !== 'object' || body === null || !texts.has(body)) return json.call(this, body);
      let text = texts.get(body);
      if (text == null) {
        // Kept as bytes: express would otherwise copy a text this long into a Buffer on every send.
        text = Buffer.from(JSON.stringify(body));
        texts.set(body, text);
      }
      // Express adds the charset to a string's type; a Buffer's type is sent as it is set.
      const type = this.get('Content-Type');
      if (type !== undefined) return this.send(text.toString());
      this.set('Content-Type', 'application/json; charset=utf-8');
      return this.send(text);
    };
  }
}
