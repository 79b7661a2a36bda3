import busboy from 'busboy';
import { HttpError, badRequest, sizeOf } from './errors.js';
import type { ApiRequest } from './request.js';

const FIELD = 'image';

// The HTTP side of an image upload (busboy over the request stream, 413 and 415): src/catalog/images.ts keeps the image.

/**
 * Reads the one file field `image` of a multipart body into memory, refusing as soon as
 * it passes the limit so a huge upload is never buffered whole.
 */
export function readImageField(request: ApiRequest, limitBytes: number): Promise<Buffer> {
  const req = request.message;
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // busboy signals `limit` on reaching fileSize, not on passing it: one byte of headroom
      // keeps a file of exactly limitBytes acceptable ("at most 5 MB").
      parser = busboy({ headers: req.headers, limits: { fileSize: limitBytes + 1, files: 1, fields: 20, parts: 21 } });
    } catch {
      reject(new HttpError(415, `Content-Type must be multipart/form-data with a file field "${FIELD}"`));
      return;
    }
    let image: Buffer | undefined;
    let failure: HttpError | undefined;
    const fail = (error: HttpError): void => {
      failure ??= error;
      req.unpipe(parser);
      req.resume();
      reject(failure);
    };
    parser.on('file', (name, stream) => {
      // A form cut off inside a file destroys the file stream with the error too; unheard,
      // that 'error' event would crash the whole process.
      stream.on('error', (error: Error) => fail(badRequest(`malformed multipart body: ${error.message}`)));
      if (name !== FIELD) {
        stream.resume();
        fail(badRequest(`unexpected file field "${name}"; the image goes in the field "${FIELD}"`));
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => fail(new HttpError(413, `image is larger than the limit of ${sizeOf(limitBytes)}`)));
      stream.on('close', () => {
        if (!failure) image = Buffer.concat(chunks);
      });
    });
    parser.on('filesLimit', () => fail(badRequest(`only one file is accepted, in the field "${FIELD}"`)));
    parser.on('partsLimit', () => fail(badRequest('too many multipart parts')));
    parser.on('error', (error: Error) => fail(badRequest(`malformed multipart body: ${error.message}`)));
    parser.on('close', () => {
      if (failure) return;
      if (!image || image.length === 0) reject(badRequest(`image is required: send the file in the multipart field "${FIELD}"`));
      else resolve(image);
    });
    req.pipe(parser);
  });
}
