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
