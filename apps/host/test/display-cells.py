# Helpers the display tests' cells share (read into each cell): a real PNG from the stdlib, and
# objects that show it through _repr_png_.
import struct, zlib


def png(width, height, color=(200, 30, 30)):
    row = b"\x00" + bytes(color) * width
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b"")


class Picture:
    def __init__(self, width, height, color=(200, 30, 30)):
        self.data = png(width, height, color)
        self.size = (width, height)

    def _repr_png_(self):
        return self.data

    def __repr__(self):
        return f"<Picture {self.size[0]}x{self.size[1]}>"
