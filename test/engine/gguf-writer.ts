/**
 * A small GGUF (version 3) writer for test models: metadata key/values and F32/F16 tensors, laid out as
 * the format's public specification describes (ggml `docs/gguf.md`): little-endian header (magic
 * `GGUF`, version, tensor count, key/value count), the key/values, the tensor infos (name, dims
 * innermost first, ggml type, offset into the data section), zero padding to the alignment, then
 * each tensor's bytes, each starting at a multiple of the alignment.
 */
import { closeSync, openSync, writeSync } from 'node:fs';

/** GGUF metadata value types used here (spec `gguf_metadata_value_type`). */
const VALUE_TYPE = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;

/** ggml tensor type ids (spec `ggml_type`): GGML_TYPE_F32, GGML_TYPE_F16. */
const GGML_TYPE = { f32: 0, f16: 1 } as const;

/** Default `general.alignment` of the data section, bytes. */
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** One metadata value; arrays hold strings or 32-bit signed integers. */
export type GgufValue =
  | { type: 'u32'; value: number }
  | { type: 'i32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'strings'; value: readonly string[] }
  | { type: 'i32s'; value: Int32Array };

/**
 * One tensor: `dims` innermost (fastest-varying) first, as ggml's `ne`; data length = product of
 * dims; stored as `f32`, or as `f16` (IEEE half, rounded to nearest even).
 */
export interface GgufTensor {
  name: string;
  dims: readonly number[];
  data: Float32Array;
  type: 'f32' | 'f16';
}

const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

/** IEEE 754 half-precision bits of `value` as a float32 (round to nearest even; overflow to infinity). */
export function toHalfBits(value: number): number {
  scratchF32[0] = value;
  const x = scratchU32[0] as number;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    const m = mant | 0x800000;
    const shift = 14 - e;
    const half = m >>> shift;
    const rest = m & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (half + (rest > mid || (rest === mid && (half & 1) === 1) ? 1 : 0));
  }
  const half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1) ? 1 : 0));
}

/** The tensor's bytes as stored. */
function tensorBytes(t: GgufTensor): Buffer {
  if (t.type === 'f32') return Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const half = new Uint16Array(t.data.length);
  for (let i = 0; i < t.data.length; i++) half[i] = toHalfBits(t.data[i] as number);
  return Buffer.from(half.buffer);
}

/** Collects little-endian bytes in chunks. */
class ByteSink {
  readonly chunks: Buffer[] = [];
  length = 0;

  push(buf: Buffer): void {
    this.chunks.push(buf);
    this.length += buf.length;
  }

  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }

  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }

  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }

  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }

  /** A GGUF string: u64 byte length, then the UTF-8 bytes (no terminator). */
  str(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }

  padTo(alignment: number): void {
    const rem = this.length % alignment;
    if (rem !== 0) this.push(Buffer.alloc(alignment - rem));
  }
}

function writeValue(sink: ByteSink, v: GgufValue): void {
  switch (v.type) {
    case 'u32':
      sink.u32(VALUE_TYPE.u32);
      sink.u32(v.value);
      return;
    case 'i32':
      sink.u32(VALUE_TYPE.i32);
      sink.i32(v.value);
      return;
    case 'f32':
      sink.u32(VALUE_TYPE.f32);
      sink.f32(v.value);
      return;
    case 'bool':
      sink.u32(VALUE_TYPE.bool);
      sink.push(Buffer.from([v.value ? 1 : 0]));
      return;
    case 'string':
      sink.u32(VALUE_TYPE.string);
      sink.str(v.value);
      return;
    case 'strings':
      sink.u32(VALUE_TYPE.array);
      sink.u32(VALUE_TYPE.string);
      sink.u64(v.value.length);
      for (const s of v.value) sink.str(s);
      return;
    case 'i32s':
      sink.u32(VALUE_TYPE.array);
      sink.u32(VALUE_TYPE.i32);
      sink.u64(v.value.length);
      sink.push(Buffer.from(v.value.buffer, v.value.byteOffset, v.value.byteLength));
      return;
  }
}

function alignUp(n: number, alignment: number): number {
  return Math.ceil(n / alignment) * alignment;
}

/**
 * Writes a GGUF v3 file at `path` (overwritten) and returns its size in bytes. `metadata` is written
 * in the given order; `general.alignment` is not written, so the default {@link GGUF_DEFAULT_ALIGNMENT}
 * applies.
 * @throws {Error} when a tensor's data length is not the product of its dims, or on I/O errors.
 */
export function writeGguf(
  path: string,
  metadata: ReadonlyArray<readonly [string, GgufValue]>,
  tensors: readonly GgufTensor[],
): number {
  const alignment = GGUF_DEFAULT_ALIGNMENT;
  const head = new ByteSink();
  head.push(Buffer.from('GGUF', 'ascii'));
  head.u32(3);
  head.u64(tensors.length);
  head.u64(metadata.length);
  for (const [key, value] of metadata) {
    head.str(key);
    writeValue(head, value);
  }
  let offset = 0;
  for (const t of tensors) {
    const elements = t.dims.reduce((a, b) => a * b, 1);
    if (elements !== t.data.length) {
      throw new Error(`tensor ${t.name}: ${t.data.length} values for dims [${t.dims.join(', ')}]`);
    }
    head.str(t.name);
    head.u32(t.dims.length);
    for (const d of t.dims) head.u64(d);
    head.u32(GGML_TYPE[t.type]);
    head.u64(offset);
    offset = alignUp(offset + t.data.length * (t.type === 'f32' ? 4 : 2), alignment);
  }
  head.padTo(alignment);
  const fd = openSync(path, 'w');
  try {
    for (const chunk of head.chunks) writeSync(fd, chunk);
    let written = 0;
    for (const t of tensors) {
      const bytes = tensorBytes(t);
      writeSync(fd, bytes);
      written += bytes.length;
      const pad = alignUp(written, alignment) - written;
      if (pad > 0) writeSync(fd, Buffer.alloc(pad));
      written += pad;
    }
    return head.length + written;
  } finally {
    closeSync(fd);
  }
}
