"""Minimal PNG structure check for the tests: signature, chunk CRCs, IHDR size,
and that the image data inflates to the expected number of bytes."""
import struct
import zlib

SIG = b"\x89PNG\r\n\x1a\n"


def check_png(data):
    """Returns (width, height); raises AssertionError on any defect."""
    assert data[:8] == SIG, "bad PNG signature"
    pos, chunks, idat = 8, [], b""
    width = height = None
    while pos < len(data):
        assert pos + 8 <= len(data), "truncated chunk header"
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        assert len(body) == length, "truncated chunk"
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(ctype + body) & 0xFFFFFFFF == crc, f"bad CRC in {ctype!r}"
        chunks.append(ctype)
        if ctype == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            bpp = {2: 3, 6: 4, 0: 1, 4: 2}[color] * depth // 8
        elif ctype == b"IDAT":
            idat += body
        pos += 12 + length
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND", chunks
    raw = zlib.decompress(idat)
    assert len(raw) == height * (1 + width * bpp), "image data has the wrong size"
    return width, height
