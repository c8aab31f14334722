import { Socket } from "node:net";
import type { Readable } from "node:stream";
import type { ByteTail } from "./tail.js";

/** Size of the one reusable read buffer per drained stream. */
const READ_BUFFER_BYTES = 64 * 1024;

let symbols: { buffer: symbol; callback: symbol } | null | undefined;

// Node's net.Socket `onread` option reads into one caller-owned buffer instead of allocating a
// fresh chunk per read. A child's pipes are created internally without it, so borrow the two
// symbols it sets from a throwaway socket. If a Node version lacks them, fall back to 'data'.
function userBufferSymbols(): { buffer: symbol; callback: symbol } | null {
  if (symbols !== undefined) return symbols;
  try {
    const probe = new Socket({ onread: { buffer: Buffer.alloc(1), callback: () => true } } as ConstructorParameters<typeof Socket>[0]);
    const own = Object.getOwnPropertySymbols(probe);
    const buffer = own.find((s) => s.description === "kBuffer");
    const callback = own.find((s) => s.description === "kBufferCb");
    probe.destroy();
    symbols = buffer && callback ? { buffer, callback } : null;
  } catch {
    symbols = null;
  }
  return symbols;
}

/**
 * Drain `stream` continuously into `tail`, never pausing the writer. Where Node allows it, reads
 * go into one reused 64 KiB buffer, so a flood allocates nothing per chunk; otherwise each 'data'
 * chunk is copied into the tail and dropped.
 */
export function drainInto(stream: Readable | null | undefined, tail: ByteTail): void {
  if (!stream) return;
  const handle = (stream as unknown as { _handle?: { useUserBuffer?: (buf: Uint8Array) => void } })._handle;
  const syms = userBufferSymbols();
  if (syms && stream instanceof Socket && handle && typeof handle.useUserBuffer === "function") {
    const buffer = Buffer.alloc(READ_BUFFER_BYTES);
    const target = stream as unknown as Record<symbol, unknown>;
    target[syms.buffer] = buffer;
    target[syms.callback] = (nread: number, buf: Buffer) => {
      tail.push(buf.subarray(0, nread));
      return true;
    };
    handle.useUserBuffer(buffer);
    stream.resume();
    return;
  }
  stream.on("data", (chunk: Uint8Array) => tail.push(chunk));
}
