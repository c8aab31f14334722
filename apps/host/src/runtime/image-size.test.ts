import { describe, expect, test } from "vitest";
import { imageSize } from "./image-size";

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function png(width: number, height: number, type = "IHDR"): Buffer {
  const ihdr = Buffer.alloc(8 + 13);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write(type, 4, "latin1");
  ihdr.writeUInt32BE(width, 8);
  ihdr.writeUInt32BE(height, 12);
  return Buffer.concat([SIGNATURE, ihdr]);
}

/** SOI, an APP0 segment, optional stand-alone markers and fill bytes, then a start-of-frame marker. */
function jpeg(width: number, height: number, sof = 0xc0, before: number[] = []): Buffer {
  const app0 = [0xff, 0xe0, 0x00, 0x10, ...Buffer.from("JFIF\0"), 1, 1, 0, 0, 1, 0, 1, 0, 0];
  const frame = [0xff, sof, 0x00, 0x11, 8, height >> 8, height & 0xff, width >> 8, width & 0xff, 3];
  return Buffer.from([0xff, 0xd8, ...app0, ...before, ...frame, ...Array(9).fill(0)]);
}

describe("imageSize", () => {
  test("PNG: IHDR's width and height", () => {
    expect(imageSize("image/png", png(640, 480))).toEqual({ width: 640, height: 480 });
    expect(imageSize("image/png", png(70_000, 1))).toEqual({ width: 70_000, height: 1 });
  });
  test("PNG without an IHDR first, too short, or zero-sized: unknown", () => {
    expect(imageSize("image/png", png(640, 480, "IDAT"))).toEqual({ width: null, height: null });
    expect(imageSize("image/png", png(640, 480).subarray(0, 23))).toEqual({ width: null, height: null });
    expect(imageSize("image/png", png(0, 480))).toEqual({ width: null, height: null });
  });
  test("JPEG: the first start-of-frame after other segments (baseline and progressive)", () => {
    expect(imageSize("image/jpeg", jpeg(640, 480))).toEqual({ width: 640, height: 480 });
    expect(imageSize("image/jpeg", jpeg(300, 200, 0xc2))).toEqual({ width: 300, height: 200 });
  });
  test("JPEG: fill bytes and stand-alone markers are stepped over; DHT (C4) is not a frame", () => {
    const dht = [0xff, 0xc4, 0x00, 0x03, 0x00];
    expect(imageSize("image/jpeg", jpeg(12, 34, 0xc0, [0xff, 0xff, 0xd0, ...dht]))).toEqual({ width: 12, height: 34 });
  });
  test("JPEG: a scan before any frame, a broken marker or a cut header: unknown", () => {
    expect(imageSize("image/jpeg", Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02]))).toEqual({ width: null, height: null });
    expect(imageSize("image/jpeg", Buffer.from([0xff, 0xd8, 0x00, 0x00, 0x00, 0x00]))).toEqual({ width: null, height: null });
    expect(imageSize("image/jpeg", jpeg(640, 480).subarray(0, 24))).toEqual({ width: null, height: null });
  });
  test("other types: unknown", () => {
    expect(imageSize("image/gif", png(1, 1))).toEqual({ width: null, height: null });
  });
});
