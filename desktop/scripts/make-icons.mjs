// Draws the app's icons (build/icon.png for the installers, build/tray.png for the tray): a dark
// rounded square with a green "run" triangle. Written as a script so the PNGs in build/ can be
// made again, or changed, without an image editor: `node desktop/scripts/make-icons.mjs`.
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}
function png(size, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) rgba.copy(raw, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const BACKGROUND = [0x1b, 0x1d, 0x23];
const GREEN = [0x3f, 0xb6, 0x8b];

/** The colour at (x, y) of the unit square, or undefined outside the rounded square. */
function shade(x, y) {
  const r = 0.2;
  const cx = Math.min(Math.max(x, r), 1 - r);
  const cy = Math.min(Math.max(y, r), 1 - r);
  if ((x - cx) ** 2 + (y - cy) ** 2 > r * r) return undefined;
  // The triangle: points (0.36, 0.27), (0.36, 0.73), (0.74, 0.5).
  const inTriangle = x >= 0.36 && y - 0.5 <= ((0.74 - x) / 0.38) * 0.23 && 0.5 - y <= ((0.74 - x) / 0.38) * 0.23;
  return inTriangle ? GREEN : BACKGROUND;
}

function draw(size) {
  const samples = 4;
  const rgba = Buffer.alloc(size * size * 4);
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      const sum = [0, 0, 0, 0];
      for (let sy = 0; sy < samples; sy++) {
        for (let sx = 0; sx < samples; sx++) {
          const colour = shade((px + (sx + 0.5) / samples) / size, (py + (sy + 0.5) / samples) / size);
          if (!colour) continue;
          sum[0] += colour[0];
          sum[1] += colour[1];
          sum[2] += colour[2];
          sum[3] += 1;
        }
      }
      const at = (py * size + px) * 4;
      if (sum[3] === 0) continue;
      rgba.set([sum[0] / sum[3], sum[1] / sum[3], sum[2] / sum[3], (255 * sum[3]) / samples ** 2], at);
    }
  }
  return png(size, rgba);
}

const out = new URL('../build/', import.meta.url);
writeFileSync(new URL('icon.png', out), draw(512));
writeFileSync(new URL('tray.png', out), draw(32));
console.log(`wrote ${new URL('icon.png', out).pathname} (512 px) and tray.png (32 px)`);
