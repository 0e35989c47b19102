// tests/engine/data/image_decode_test.cpp — engine/data/image_decode.cpp: every format decodes; damaged, truncated
// and oversized files are refused before stb_image decodes them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "data_test_util.h"

#include "image_writer.h"

namespace {

using Bytes = std::vector<uint8_t>;

// A 5x3 RGB test card: every pixel different.
Bytes card() {
  Bytes px(5 * 3 * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = uint8_t(17 * i);
  return px;
}

void append(void* out, void* data, int size) {
  auto* b = static_cast<Bytes*>(out);
  b->insert(b->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
}

Bytes encode(const char* format) {
  const Bytes px = card();
  Bytes out;
  const std::string f = format;
  stbi_write_tga_with_rle = f == "tga-rle";
  int ok = f == "png"   ? stbi_write_png_to_func(append, &out, 5, 3, 3, px.data(), 15)
           : f == "bmp" ? stbi_write_bmp_to_func(append, &out, 5, 3, 3, px.data())
           : f == "jpg" ? stbi_write_jpg_to_func(append, &out, 5, 3, 3, px.data(), 95)
                        : stbi_write_tga_to_func(append, &out, 5, 3, 3, px.data());
  REQUIRE(ok);
  return out;
}

Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

}  // namespace

TEST_CASE("PNG, BMP, TGA (raw and run-length), JPEG, GIF and PGM decode to their pixels") {
  const Bytes px = card();
  for (const std::string f : {"png", "bmp", "tga", "tga-rle"}) {
    CAPTURE(f);
    const gb::data::Image img = gb::data::decode_image(encode(f.c_str()), f);
    CHECK(img.width == 5);
    CHECK(img.height == 3);
    CHECK(img.channels == 3);
    CHECK(img.pixels == px);
  }
  const gb::data::Image jpg = gb::data::decode_image(encode("jpg"), "card.jpg", 3);
  REQUIRE(jpg.pixels.size() == px.size());
  int64_t err = 0;
  for (size_t i = 0; i < px.size(); ++i) err += std::abs(int(jpg.pixels[i]) - int(px[i]));
  CHECK(err / int64_t(px.size()) < 40);  // lossy, 45 distinct values on 15 pixels: close, not equal
  // the smallest GIF: one white pixel (colour 0 of a 2-colour table)
  const Bytes gif = bytes(std::string("GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x00\x00\x00"
                                      "\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00;",
                                      43));
  const gb::data::Image g = gb::data::decode_image(gif, "dot.gif", 1);
  CHECK(g.width == 1);
  CHECK(g.pixels == Bytes{255});
  const gb::data::Image pgm = gb::data::decode_image(bytes("P5\n2 1\n255\n\x10\x20"), "ok.pgm", 1);
  CHECK(pgm.pixels == Bytes{0x10, 0x20});
}

TEST_CASE("a truncated BMP, TGA or JPEG is refused, not decoded into zeros") {
  for (const std::string f : {"bmp", "tga", "tga-rle", "jpg"}) {
    CAPTURE(f);
    Bytes b = encode(f.c_str());
    const size_t cut = f == "tga" || f == "tga-rle" ? 1 : 2;  // a BMP's last row may lack its padding (here 1
                                                             // byte); a JPEG ends with its 2-byte EOI marker
    CHECK_NOTHROW(gb::data::decode_image(b, f));
    b.erase(b.end() - std::ptrdiff_t(cut), b.end());
    CHECK_THROWS_WITH(gb::data::decode_image(b, "cut." + f), doctest::Contains("truncated or damaged"));
  }
  // found by fuzz/image_fuzz.cpp: 55 bytes whose BMP header declares 4194304x3 pixels (stb_image decoded 12.6
  // million zero pixels, seconds under the sanitizers)
  const Bytes fuzz = {0x42, 0x4d, 0x5a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x36, 0x00, 0x00, 0x00,
                      0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00,
                      0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x89, 0x50, 0x4e, 0x47, 0x0d,
                      0x0a, 0x1a, 0x28, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00};
  // and one whose height is negative (top-down: stbi_info reports -9) and width 3604480: 55 bytes, 32 M pixels
  const Bytes down = {0x42, 0x4d, 0x5a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x36, 0x00, 0x00, 0x00,
                      0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x37, 0x00, 0xf7, 0xff, 0xff, 0xff, 0x01, 0x00,
                      0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x32, 0x09, 0x50, 0x4e, 0x47, 0x0d,
                      0x0a, 0x1a, 0x08, 0x0a, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xfb, 0x00};
  CHECK_THROWS_WITH(gb::data::decode_image(down, "d.bmp", 4),
                    doctest::Contains("d.bmp: its BMP header declares 3604480x9 pixels"));
  CHECK_THROWS_WITH(gb::data::decode_image(fuzz, "t.bmp", 4),
                    doctest::Contains("t.bmp: its BMP header declares 4194304x3 pixels, which need at least 37748790 "
                                      "bytes, but the file holds 55: the file is truncated or damaged"));
}

TEST_CASE("a JPEG Huffman table of more than 256 codes is refused before stb_image writes past its table") {
  // found by fuzz/image_fuzz.cpp (UBSan: index 257 out of bounds in stbi__build_huffman), 0xFF fill bytes before SOI
  const Bytes fuzz = {0xff, 0xff, 0xff, 0xff, 0xd8, 0xff, 0xff, 0xff, 0xc4, 0xc4, 0x00, 0x00, 0x00, 0xff,
                      0xff, 0xff, 0xff, 0xff, 0x00, 0x87, 0x9c};
  CHECK_THROWS_WITH(gb::data::decode_image(fuzz, "f.jpg", 3), doctest::Contains("truncated or damaged"));
  Bytes dht(7 + 16 + 2, 255);  // SOI, a DHT of one table whose 16 counts are 255 each, EOI
  const uint8_t head[] = {0xff, 0xd8, 0xff, 0xc4, 0x00, 19, 0x00};
  std::copy(std::begin(head), std::end(head), dht.begin());
  dht[23] = 0xff, dht[24] = 0xd9;
  CHECK_THROWS_WITH(gb::data::decode_image(dht, "h.jpg", 3),
                    doctest::Contains("h.jpg: the JPEG has a Huffman table of more than 256 codes"));
  CHECK_NOTHROW(gb::data::decode_image(encode("jpg"), "ok.jpg", 3));  // a real JPEG's tables pass
}

TEST_CASE("a PNG chunk longer than the file, or a PNG without IEND, is refused before stb_image allocates for it") {
  Bytes png = encode("png");
  CHECK_NOTHROW(gb::data::decode_image(png, "ok.png"));
  Bytes cut = png;
  cut.resize(cut.size() - 12);  // IEND gone
  CHECK_THROWS_WITH(gb::data::decode_image(cut, "cut.png"), doctest::Contains("cut.png: the PNG ends"));
  Bytes big = png;  // found by fuzz/image_fuzz.cpp: a damaged IDAT length made stb_image ask for 2 GiB
  big[33] = 0x5c, big[34] = 0x00;  // the first chunk after IHDR (8 + 25 bytes): its length's top bytes
  CHECK_THROWS_WITH(gb::data::decode_image(big, "big.png"), doctest::Contains("big.png: a PNG chunk declares"));
}

TEST_CASE("an image declaring more than max_pixels pixels is refused, naming the setting that raises the limit") {
  const Bytes png = encode("png");
  CHECK(gb::data::decode_image(png, "a.png", 0, 15).width == 5);
  CHECK_THROWS_WITH(gb::data::decode_image(png, "a.png", 0, 14),
                    doctest::Contains("a.png: it declares 5x3 pixels, more than the limit of 14 (PIL's, against "
                                      "decompression bombs and damaged headers); if the image is genuine, raise "
                                      "ImageFolderOptions().max_pixels(N)"));
  CHECK(gb::data::kMaxImagePixels == 178'956'970);  // PIL's Image.MAX_IMAGE_PIXELS * 2
}

TEST_CASE("formats outside the list (Photoshop, Radiance HDR) are refused with the list") {
  for (const char* s : {"8BPS\x00\x01", "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 1\n"})
    CHECK_THROWS_WITH(gb::data::decode_image(bytes(s), "x.img"),
                      doctest::Contains("the file is not a PNG/JPEG/BMP/GIF/TGA/PNM image or is damaged"));
}

TEST_CASE("decode_image refuses 16-bit PGM/PPM, whose stb_image path overruns its buffer on a damaged file") {
  // found by fuzz/image_fuzz.cpp: a P5 header with maxval 325 and too few bytes (a heap overflow inside stb_image)
  const std::string crash =
      "P5\x0b"
      "45\x0b"
      "4 325\n255\n@@@@@@@@@@@@ 3\n255\n@@@@@@@@@@@@";
  CHECK_THROWS_WITH(gb::data::decode_image(bytes(crash), "crash.pgm", 1),
                    doctest::Contains("crash.pgm: 16-bit PGM/PPM images are not supported"));
  // also found by it: a maximum value of 26 digits (an int overflow inside stb_image), a 8888888x4 header over 40
  // bytes (stb_image allocates what the header says)
  const std::string digits =
      "P5\x0b"
      "45\n\x0b"
      "3\t\t\t44444444444444444444444444\t\t";
  CHECK_THROWS_WITH(gb::data::decode_image(bytes(digits), "d.pgm", 1),
                    doctest::Contains("d.pgm: its PGM/PPM header is damaged (the maximum value is not a number"));
  const std::string big = std::string("P5 8888888 4 255\n") + std::string(22, '@');
  CHECK_THROWS_WITH(gb::data::decode_image(bytes(big), "b.pgm", 1),
                    doctest::Contains("b.pgm: its PGM/PPM header declares 8888888x4 pixels (35555552 bytes) but the "
                                      "file holds 22 after it"));
  CHECK_THROWS_WITH(gb::data::decode_image(bytes("P5\n2 1\n255\n\x10"), "cut.pgm", 1),
                    doctest::Contains("cut.pgm: its PGM/PPM header declares 2x1 pixels (2 bytes) but the file holds 1"));
}
