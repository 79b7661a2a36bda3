/**
 * Connections the server has accepted, for the schedulers of long work (list handlers,
 * streamed answers' pieces) to give way to the ones still waiting to be accepted.
 *
 * libuv accepts one connection per turn of the event loop (libuv#3696: no accept() loop), so
 * the kernel's accept queue drains at the loop's turn rate. With 250 clients asking for 3.5 MiB
 * pages at once, turns of ~20 ms of page work took ~170 queued connections 3 s to accept, and a
 * health probe that came in behind them waited as long, though the event loop was never held
 * over 200 ms. A turn that accepted a connection may have left more in the queue: the next
 * turns do the least of the long work that still moves it on (one piece, one page), so the
 * queue drains in a few milliseconds a connection; once a turn accepts none, they do their
 * full share again.
 */
export class Accepts {
  private count = 0;

  /** The server's 'connection' listener. */
  readonly note = (): void => {
    this.count++;
  };

  /** For one scheduler: whether a connection was accepted since it last asked (the first ask: since the watch began). */
  watch(): () => boolean {
    let seen = this.count;
    return () => {
      const accepted = this.count !== seen;
      seen = this.count;
      return accepted;
    };
  }
}

/** For a scheduler given no Accepts (a pipeline without a server, in tests): never accepting. */
export const NEVER_ACCEPTING = (): boolean => false;
