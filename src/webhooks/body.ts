/** Reading a request body with a hard size limit, without ever buffering more than the limit. */

export const BodyTooLarge = Symbol('body too large');

/**
 * The whole body as bytes, or `BodyTooLarge` as soon as more than `limit` bytes arrived (the
 * stream is cancelled then). A declared Content-Length over the limit is refused before reading.
 */
export async function readBody(stream: ReadableStream<Uint8Array> | null, limit: number, declaredLength?: string | null): Promise<Uint8Array | typeof BodyTooLarge> {
  if (declaredLength && Number(declaredLength) > limit) {
    await stream?.cancel().catch(() => undefined);
    return BodyTooLarge;
  }
  if (!stream) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return BodyTooLarge;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.byteLength;
  }
  return body;
}

/** The parts of Node's `IncomingMessage` read here. */
export interface NodeBodyStream {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end' | 'error' | 'aborted', listener: (err?: Error) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer) => void): unknown;
  off(event: 'end' | 'error' | 'aborted', listener: (err?: Error) => void): unknown;
  resume(): unknown;
}

/**
 * The same over a Node request stream (cheaper than a web stream). Past the limit the rest is
 * read and dropped, never kept, so the 413 can still be written on the open connection.
 */
export function readNodeBody(incoming: NodeBodyStream, limit: number, declaredLength?: string): Promise<Uint8Array | typeof BodyTooLarge> {
  if (declaredLength && Number(declaredLength) > limit) {
    incoming.resume();
    return Promise.resolve(BodyTooLarge);
  }
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      stop();
      incoming.resume();
      resolveBody(BodyTooLarge);
    };
    const onEnd = () => {
      stop();
      resolveBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err?: Error) => {
      stop();
      reject(err ?? new Error('request stream failed'));
    };
    const onAborted = () => onError(new Error('request aborted'));
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('aborted', onAborted);
  });
}
