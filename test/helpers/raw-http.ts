import { connect, type Socket } from 'node:net';

/** One answer as it came off a raw socket. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A TCP connection to a sandbox from `localAddress` (any of 127.0.0.0/8 stands for another
 * client on loopback), speaking HTTP/1.1 by hand: node's client would pool the connection or
 * close it itself, and a test of connection caps must see what the server does to it.
 */
export class RawConnection {
  private buffered = Buffer.alloc(0);
  private waiter: (() => void) | undefined;
  /** Resolves when the server ends or resets the connection. */
  readonly ended: Promise<void>;
  private isEnded = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.waiter?.();
    });
    this.ended = new Promise((resolve) => {
      const done = (): void => {
        this.isEnded = true;
        resolve();
        this.waiter?.();
      };
      socket.once('end', done);
      socket.once('close', done);
    });
    // A reset by the server is what some tests wait for.
    socket.on('error', () => undefined);
  }

  static open(port: number, localAddress = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1', localAddress });
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  get closed(): boolean {
    return this.isEnded;
  }

  /** Writes raw bytes (a request, or part of one). */
  write(text: string | Buffer): void {
    this.socket.write(text);
  }

  /** Sends a whole request and reads its answer. */
  ask(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawAnswer> {
    this.write(requestHead(method, path, { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) }) + (body ?? ''));
    return this.answer();
  }

  /** Reads the next answer (Content-Length framed, as every answer of the sandbox is). */
  async answer(timeoutMs = 10_000): Promise<RawAnswer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.buffered.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine = '', ...lines] = this.buffered.subarray(0, end).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of lines) {
          const colon = line.indexOf(':');
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        if (this.buffered.length >= end + 4 + length) {
          const body = this.buffered.subarray(end + 4, end + 4 + length).toString('utf8');
          this.buffered = this.buffered.subarray(end + 4 + length);
          return { status: Number(statusLine.split(' ')[1]), headers, body };
        }
      }
      if (this.isEnded) throw new Error(`the connection ended before a whole answer (${this.buffered.length} bytes: ${this.buffered.toString('latin1').slice(0, 200)})`);
      if (Date.now() > deadline) throw new Error('no answer in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** A request line and headers, keep-alive (HTTP/1.1's default), Host set. */
export function requestHead(method: string, path: string, headers: Record<string, string> = {}): string {
  const lines = Object.entries({ host: '127.0.0.1', ...headers }).map(([name, value]) => `${name}: ${value}\r\n`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join('')}\r\n`;
}
