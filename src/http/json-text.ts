/**
 * Answer bodies that keep their JSON text: a transaction polled until its status moves is
 * sent again and again unchanged, and serializing it (most of it a ~1 KB base64 QR image)
 * was a good part of such a GET's CPU (docs/benchmarks.md, "Figures behind choices in the code"). A body is registered once, frozen,
 * and serialized the first time the reply stage sends it; the text lives exactly as long as
 * the body does. One instance per sandbox: its texts are its own.
 */
export class JsonTexts {
  private readonly texts = new WeakMap<object, Buffer | null>();

  /** Registers a body whose text is kept from its first send; it cannot change after that. */
  keep<T extends object>(body: T): T {
    if (!this.texts.has(body)) this.texts.set(body, null);
    return Object.freeze(body);
  }

  /**
   * A registered body's JSON text (JSON.stringify's, serialized on its first send), as bytes
   * so that no send copies it again; undefined for a body that was not registered.
   */
  textOf(body: unknown): Buffer | undefined {
    if (typeof body !== 'object' || body === null) return undefined;
    const text = this.texts.get(body);
    if (text === undefined) return undefined;
    if (text !== null) return text;
    const serialized = Buffer.from(JSON.stringify(body));
    this.texts.set(body, serialized);
    return serialized;
  }
}
