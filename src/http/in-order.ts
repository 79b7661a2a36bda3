import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/**
 * Requests a client may pipeline on one connection before its answers are read: past it the
 * connection is closed. No client of the API pipelines (browsers and HTTP libraries send one
 * request at a time per connection); a load tool that does stays far below it.
 */
export const MAX_PIPELINED = 32;

/**
 * One answer in flight per connection: a request pipelined behind another is handled once the
 * answer before it has been handed to the socket whole ('finish'), never beside it. Node parses
 * every request a client pipelines and would run them all at once, each answer waiting in memory
 * for its turn on the socket: four large pages asked back to back by a client that reads none
 * held four pages each. Behind an answer the client does not read (a streamed one waits for
 * it), the next request waits too, and costs only its parsed head.
 */
export function oneAnswerAtATime(listener: RequestListener): RequestListener {
  return answersInOrder(listener).listener;
}

/**
 * oneAnswerAtATime's listener, and whether a connection has an answer in flight now (a request
 * of it handled and not finished): nothing else may be written to that socket meanwhile.
 */
export function answersInOrder(listener: RequestListener): { listener: RequestListener; answering: (socket: object) => boolean } {
  const waiting = new WeakMap<object, (() => void)[]>();
  const answering = (socket: object): boolean => waiting.has(socket);
  const inOrder: RequestListener = (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const queue = waiting.get(socket);
    const start = (): void => {
      let done = false;
      const next = (): void => {
        if (done) return;
        done = true;
        // A connection that closed answers nothing more: what waited on it is let go.
        const following = socket.destroyed ? undefined : waiting.get(socket)?.shift();
        if (following) following();
        else waiting.delete(socket);
      };
      res.once('finish', next);
      res.once('close', next);
      listener(req, res);
    };
    if (queue === undefined) {
      waiting.set(socket, []);
      return start();
    }
    if (queue.length >= MAX_PIPELINED) return void socket.destroy();
    queue.push(start);
  };
  return { listener: inOrder, answering };
}
